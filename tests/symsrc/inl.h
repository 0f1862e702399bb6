/* inl.h - always-inlined helpers for the DWARF fixture: their code lands inside callers in inl.c,
 * so addresses there have inlined frames whose call sites are in another file. */
#ifndef BT_FIXTURE_INL_H
#define BT_FIXTURE_INL_H

static inline __attribute__((always_inline)) unsigned fx_mix(unsigned x)
{
	x ^= x >> 13;
	x *= 0x5bd1e995u;
	return x ^ (x >> 15);
}

static inline __attribute__((always_inline)) unsigned fx_round(unsigned x, unsigned k)
{
	for (unsigned i = 0; i < k; i++)
		x = fx_mix(x + i);
	return x;
}

#endif
