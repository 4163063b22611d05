/* caps.h - ckpt's own capabilities. */
#ifndef CKPT_CAPS_H
#define CKPT_CAPS_H

#include <stdbool.h>

/* Whether ckpt has capability @cap (CAP_*) in effect. */
bool cap_effective(int cap);

#endif
