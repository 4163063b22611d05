#ifndef CKPT_CLI_H
#define CKPT_CLI_H
#include <stdbool.h>
#include <stdio.h>
int ckpt_info(int fd, bool json, FILE *out, int logfd);
int cmd_demo(const char *self);
int demo_workload(void);
#endif
