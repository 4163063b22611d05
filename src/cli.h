#ifndef CKPT_CLI_H
#define CKPT_CLI_H
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
int ckpt_info(int fd, bool json, FILE *out, int logfd);
int cmd_demo(const char *self);
int demo_workload(void);
int wait_child(pid_t pid);
int restart_in_pidns(int fd, unsigned long flags, int logfd);
#endif
