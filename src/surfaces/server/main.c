/* main.c — the loom-serve program (placeholder until http/ lands). */
#include <stdio.h>

int main(void)
{
    fprintf(stderr, "loom-serve: not built yet\n");
    return 2;
}
