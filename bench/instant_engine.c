/* An engine that answers at once: the opponent the referee's overhead is measured against.

   It speaks spec/PROTOCOL.md from the position line alone, in C, so that its own time per
   decision is a few microseconds. It passes the first upcard, always draws from the stock,
   and on a discard throws away the card that leaves the least deadwood (never the card just
   taken from the pile); it knocks when that leaves no more than the knock limit. It answers
   `go` from the phase of the latest position, so `go advice` gets a move of the captain's
   position. `bench/throughput.py` compiles it with the system's C compiler.

   Build by hand: cc -O2 -o instant_engine bench/instant_engine.c */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char RANKS[] = "A23456789TJQK";
static const char SUITS[] = "cdhs";

/* A card is suit * 13 + rank (rank 0 is the ace); a hand is a 52-bit mask. */
static int card_of(const char *s) {
    const char *r = strchr(RANKS, s[0]);
    const char *u = strchr(SUITS, s[1]);
    if (s[0] == '\0' || s[1] == '\0' || r == NULL || u == NULL) return -1;
    return (int)(u - SUITS) * 13 + (int)(r - RANKS);
}

static int value_of(int card) {
    int rank = card % 13 + 1;
    return rank > 10 ? 10 : rank;
}

/* The least deadwood of the cards in `hand`: the first card is either deadwood or in one of
   the melds (sets of 3 or 4, runs of 3 or more) that contain it. */
static int deadwood(uint64_t hand) {
    if (hand == 0) return 0;
    int c = __builtin_ctzll(hand);
    uint64_t rest = hand & ~(1ULL << c);
    int best = value_of(c) + deadwood(rest);
    int rank = c % 13, suit = c / 13;
    /* sets containing c: c plus two or three others of its rank */
    int others[3], n = 0;
    for (int s = 0; s < 4; s++)
        if (s != suit && (rest >> (s * 13 + rank) & 1)) others[n++] = s * 13 + rank;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            uint64_t set = (1ULL << others[a]) | (1ULL << others[b]);
            int d = deadwood(rest & ~set);
            if (d < best) best = d;
        }
    if (n == 3) {
        uint64_t set = (1ULL << others[0]) | (1ULL << others[1]) | (1ULL << others[2]);
        int d = deadwood(rest & ~set);
        if (d < best) best = d;
    }
    /* runs containing c: from `low` to `high` in its suit, every card held */
    for (int low = rank; low >= 0 && (hand >> (suit * 13 + low) & 1); low--)
        for (int high = rank; high < 13 && (hand >> (suit * 13 + high) & 1); high++) {
            if (high - low < 2) continue;
            uint64_t run = 0;
            for (int r = low; r <= high; r++) run |= 1ULL << (suit * 13 + r);
            int d = deadwood(hand & ~run);
            if (d < best) best = d;
        }
    return best;
}

/* What the latest position said. */
static char phase[16] = "";
static uint64_t cards = 0;
static int taken = -1;   /* the card taken from the pile this turn, if the last turn took one */
static int drawn = -1;   /* the card this seat drew from the stock this turn */
static int knocklimit = 10;

static void read_history(char *list) {
    taken = drawn = -1;
    if (strcmp(list, "-") == 0) return;
    char *last = strrchr(list, ',');
    last = last ? last + 1 : list; /* "seat:word[:card...]" */
    char *word = strchr(last, ':');
    if (word == NULL) return;
    word++;
    char *card = strchr(word, ':');
    if (card == NULL) return;
    if (strncmp(word, "take:", 5) == 0 || strncmp(word, "pile:", 5) == 0)
        taken = card_of(card + 1);
    else if (strncmp(word, "stock:", 6) == 0)
        drawn = card_of(card + 1);
}

static void read_position(char *line) {
    char *save = NULL;
    char *key = strtok_r(line, " \t", &save); /* "position" */
    cards = 0;
    taken = drawn = -1;
    while ((key = strtok_r(NULL, " \t", &save)) != NULL) {
        if (strchr(key, '=') != NULL) continue; /* a rule parameter */
        char *value = strtok_r(NULL, " \t", &save);
        if (value == NULL) break;
        if (strcmp(key, "phase") == 0) {
            snprintf(phase, sizeof phase, "%s", value);
        } else if (strcmp(key, "knocklimit") == 0) {
            knocklimit = atoi(value);
        } else if (strcmp(key, "cards") == 0) {
            for (char *p = value; *p && *p != '-'; p += 3) {
                int c = card_of(p);
                if (c >= 0) cards |= 1ULL << c;
                if (p[2] != ',') break;
            }
        } else if (strcmp(key, "history") == 0) {
            read_history(value);
        }
    }
}

static void say(const char *text) {
    size_t n = strlen(text);
    while (n > 0) {
        ssize_t w = write(1, text, n);
        if (w <= 0) exit(0);
        text += w;
        n -= (size_t)w;
    }
}

static void answer(void) {
    char out[64];
    if (strcmp(phase, "offer") == 0) {
        say("move pass\n");
        return;
    }
    if (strcmp(phase, "draw") == 0) {
        say("move stock\n");
        return;
    }
    /* discard: the card leaving the least deadwood, the drawn card on a tie */
    int best = -1, best_dw = 1 << 30;
    if (drawn >= 0 && (cards >> drawn & 1)) {
        best = drawn;
        best_dw = deadwood(cards & ~(1ULL << drawn));
    }
    for (int c = 0; c < 52; c++) {
        if (!(cards >> c & 1) || c == taken || c == drawn) continue;
        int d = deadwood(cards & ~(1ULL << c));
        if (d < best_dw) best = c, best_dw = d;
    }
    if (best < 0) { /* no card at all: not a real position; say something well-formed */
        say("move stock\n");
        return;
    }
    snprintf(out, sizeof out, "move %s %c%c\n", best_dw <= knocklimit ? "knock" : "discard",
             RANKS[best % 13], SUITS[best / 13]);
    say(out);
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        char *word = line + strspn(line, " \t");
        size_t wlen = strcspn(word, " \t");
        if (wlen == 8 && strncmp(word, "position", 8) == 0) {
            read_position(word);
        } else if (wlen == 2 && strncmp(word, "go", 2) == 0) {
            answer();
        } else if (wlen == 7 && strncmp(word, "isready", 7) == 0) {
            say("readyok\n");
        } else if (wlen == 3 && strncmp(word, "gin", 3) == 0) {
            say("id name instant\nid author ginproto\nginok protocol 1\n");
        } else if (wlen == 4 && strncmp(word, "quit", 4) == 0) {
            break;
        }
    }
    free(line);
    return 0;
}
