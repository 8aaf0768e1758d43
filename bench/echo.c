/* The floor of a round trip over pipes: echo every line back at once.

   `bench/throughput.py` compiles it with the system's C compiler and times a line to it and
   back, the least any referee can pay per decision. Build by hand: cc -O2 -o echo bench/echo.c */

#include <unistd.h>

int main(void) {
    static char buf[1 << 16];
    ssize_t n;
    while ((n = read(0, buf, sizeof buf)) > 0) {
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(1, buf + done, (size_t)(n - done));
            if (w <= 0) return 1;
            done += w;
        }
    }
    return 0;
}
