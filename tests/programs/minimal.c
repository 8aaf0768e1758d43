/* The minimal bot of spec/PROTOCOL.md section 12, in C: for the sandbox's tests of engines set
   up the ordinary way (a compiled binary in a folder of its own). */

#include <stdio.h>
#include <string.h>

static char line[1 << 16], phase[32], cards[1024], history[1 << 15];

static void keep(const char *key, const char *value) {
    if (!strcmp(key, "phase")) snprintf(phase, sizeof phase, "%s", value);
    else if (!strcmp(key, "cards")) snprintf(cards, sizeof cards, "%s", value);
    else if (!strcmp(key, "history")) snprintf(history, sizeof history, "%s", value);
}

static void discard(void) {
    char taken[8] = "";
    char *last = strrchr(history, ',');
    last = last ? last + 1 : history;
    char *kind = strchr(last, ':');
    if (kind && (!strncmp(kind + 1, "take:", 5) || !strncmp(kind + 1, "pile:", 5)))
        snprintf(taken, sizeof taken, "%s", kind + 6);
    char *rest, *card = strtok_r(cards, ",", &rest);
    while (card && !strcmp(card, taken)) card = strtok_r(NULL, ",", &rest);
    printf("move discard %s\n", card ? card : "");
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        char *rest, *word = strtok_r(line, " \t\r\n", &rest);
        if (!word) continue;
        if (!strcmp(word, "gin")) {
            printf("id name MinimalC\nginok protocol 1\n");
        } else if (!strcmp(word, "isready")) {
            printf("readyok\n");
        } else if (!strcmp(word, "position")) {
            phase[0] = cards[0] = history[0] = 0;
            char *key = NULL, *token;
            while ((token = strtok_r(NULL, " \t\r\n", &rest))) {
                if (strchr(token, '=')) continue; /* a rule parameter */
                if (!key) {
                    key = token;
                } else {
                    keep(key, token);
                    key = NULL;
                }
            }
        } else if (!strcmp(word, "go")) {
            if (!strcmp(phase, "offer")) printf("move pass\n");
            else if (!strcmp(phase, "draw")) printf("move stock\n");
            else discard();
        } else if (!strcmp(word, "quit")) {
            return 0;
        }
    }
    return 0;
}
