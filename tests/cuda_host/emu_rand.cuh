// The emulations' random x: a fixed LCG, so every run draws the same values
// (a failure repeats), uniform in [-1, 1) with 16 bits.
#ifndef GPUBENCH_EMU_RAND_CUH
#define GPUBENCH_EMU_RAND_CUH

static unsigned rnd_state = 12345;
static float rnd()
{
    rnd_state = rnd_state * 1664525u + 1013904223u;
    return (float)((rnd_state >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}

#endif
