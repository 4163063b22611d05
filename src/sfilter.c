/* sfilter.c - a classic BPF interpreter for seccomp filters (sfilter.h
 * says why), with the instructions the kernel's seccomp checker lets a
 * filter have. */
#include <linux/audit.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sfilter.h"

#define ACTION_ONLY(r)	((int32_t)((r) & SECCOMP_RET_ACTION_FULL))

/* One filter's verdict.  Anything it could not have (the kernel checked
 * the program when it was installed) is taken as a kill. */
static uint32_t run(const struct sfilter_prog *p, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 }, w;
	const uint8_t *data = (const uint8_t *)d;

	for (uint32_t pc = 0; pc < p->len; pc++) {
		const struct sock_filter *f = &p->insns[pc];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
				if (f->k > sizeof(*d) - 4 || f->k & 3)
					return SECCOMP_RET_KILL_PROCESS;
				memcpy(&w, data + f->k, 4);
				a = w;
			} else if (f->code == (BPF_LD | BPF_W | BPF_LEN)) {
				a = sizeof(*d);
			} else if (f->code == (BPF_LD | BPF_IMM)) {
				a = f->k;
			} else if (f->code == (BPF_LD | BPF_MEM) && f->k < BPF_MEMWORDS) {
				a = mem[f->k];
			} else {
				return SECCOMP_RET_KILL_PROCESS;
			}
			break;
		case BPF_LDX:
			if (f->code == (BPF_LDX | BPF_W | BPF_LEN))
				x = sizeof(*d);
			else if (f->code == (BPF_LDX | BPF_IMM))
				x = f->k;
			else if (f->code == (BPF_LDX | BPF_MEM) && f->k < BPF_MEMWORDS)
				x = mem[f->k];
			else
				return SECCOMP_RET_KILL_PROCESS;
			break;
		case BPF_ST:
		case BPF_STX:
			if (f->k >= BPF_MEMWORDS)
				return SECCOMP_RET_KILL_PROCESS;
			mem[f->k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV: if (!src) return 0; a /= src; break;
			case BPF_MOD: if (!src) return 0; a %= src; break;
			case BPF_OR: a |= src; break;
			case BPF_AND: a &= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src < 32 ? a << src : 0; break;
			case BPF_RSH: a = src < 32 ? a >> src : 0; break;
			case BPF_NEG: a = -a; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			break;
		case BPF_JMP: {
			bool t;

			switch (BPF_OP(f->code)) {
			case BPF_JA: pc += f->k; continue;
			case BPF_JEQ: t = a == src; break;
			case BPF_JGT: t = a > src; break;
			case BPF_JGE: t = a >= src; break;
			case BPF_JSET: t = a & src; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			pc += t ? f->jt : f->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_A ? a : f->k;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return SECCOMP_RET_KILL_PROCESS;
		}
	}
	return SECCOMP_RET_KILL_PROCESS;	/* ran off its end */
}

/* What strict mode allows: read, write, exit and sigreturn, each
 * architecture its own numbers. */
static bool strict_allows(const struct seccomp_data *d)
{
	static const int nr64[] = { 0, 1, 60, 15 }, nr32[] = { 3, 4, 1, 119 };
	const int *nr = d->arch == AUDIT_ARCH_I386 ? nr32 : nr64;

	for (int i = 0; i < 4; i++)
		if (d->nr == nr[i])
			return true;
	return false;
}

bool sfilter_harmless(const struct sfilter_set *s, const struct seccomp_data *d)
{
	uint32_t ret = SECCOMP_RET_ALLOW;

	if (s->mode == SECCOMP_MODE_STRICT)
		return strict_allows(d);
	/* the kernel's rule: the most severe of the chain's verdicts */
	for (int i = 0; i < s->n; i++) {
		uint32_t cur = run(&s->prog[i], d);

		if (ACTION_ONLY(cur) < ACTION_ONLY(ret))
			ret = cur;
	}
	switch (ret & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
	case SECCOMP_RET_LOG:
	case SECCOMP_RET_ERRNO:
	case SECCOMP_RET_TRACE:	/* with no tracer: ENOSYS */
		return true;
	default:
		return false;
	}
}

void sfilter_set_free(struct sfilter_set *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++)
		free(s->prog[i].insns);
	free(s);
}
