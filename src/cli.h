/* cli.h - what the command line has beyond the library: the demo. */
#ifndef CKPT_CLI_H
#define CKPT_CLI_H
int cmd_demo(const char *self);
int demo_workload(void);
#endif
