/* What CNTK's main prints around the commands (CNTK.cpp; PrintBuiltInfo in Common.cpp):
 * the start banner, the build info, the box before each action, "Action ... complete."
 * and COMPLETED. The line formats are in logfmt.c; the values here are partrain's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/comm.h"
#include "config.h"
#include "math/backend.h"
#include "train/logfmt.h"
#include "train/train.h"

void train_started(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, size, "%Y/%m/%d %H:%M:%S", &tm);
}

void train_print_banner(struct pt_log *log, int argc, char **argv, const char *started)
{
    size_t size = 512;
    for (int i = 0; i < argc; i++)
        size += strlen(argv[i]) + 2;
    char *text = malloc(size);
    if (!text)
        return;
    logfmt_banner(text, size, PACKAGE_NAME " " PACKAGE_VERSION, __DATE__ " " __TIME__, started,
                  argc, argv);
    pt_log_plain(log, "%s", text);
    free(text);
}

void train_print_build_info(struct pt_log *log)
{
    static const char rule[] =
        "-------------------------------------------------------------------";
    char cpu[512], mpi[64], mpi_version[64];
    backend_cpu_describe(cpu, sizeof cpu);
    /* "OpenBLAS 0.3.21 NO_LAPACKE ...": the library and its version */
    char *blank = strchr(cpu, ' ');
    if (blank && (blank = strchr(blank + 1, ' ')))
        *blank = '\0';
    comm_library(mpi, sizeof mpi, mpi_version, sizeof mpi_version);
    pt_log_printf(log, "%s\n", rule);
    pt_log_printf(log, "Build info: \n\n");
    pt_log_printf(log, "\t\tBuilt time: %s %s\n", __DATE__, __TIME__);
#ifdef __OPTIMIZE__
    pt_log_printf(log, "\t\tBuild type: release\n");
#else
    pt_log_printf(log, "\t\tBuild type: debug\n");
#endif
#ifdef PT_HAVE_CUDA
    pt_log_printf(log, "\t\tBuild target: GPU\n");
#else
    pt_log_printf(log, "\t\tBuild target: CPU\n");
#endif
    pt_log_printf(log, "\t\tWith ASGD: yes\n");
    pt_log_printf(log, "\t\tMath lib: %s\n", cpu);
    pt_log_printf(log, "\t\tMPI distribution: %s\n", mpi);
    pt_log_printf(log, "\t\tMPI version: %s\n", mpi_version);
    pt_log_printf(log, "%s\n", rule);
}

void train_print_action_start(struct pt_log *log, const char *command, const char *action)
{
    char box[1024];
    logfmt_action_banner(box, sizeof box, command, action);
    pt_log_printf(log, "\n%s\n\n", box);
}

void train_print_action_end(struct pt_log *log, const char *action, int trace)
{
    pt_log_plain(log, "\n");
    if (trace > 0)
        pt_log_printf(log, "Action \"%s\" complete.\n\n", action);
}

void train_print_completed(struct pt_log *log)
{
    /* CNTK's server farm expects __COMPLETED__ in timestamped logs */
    if (log->timestamping)
        pt_log_printf(log, "__COMPLETED__\n");
    else
        pt_log_plain(log, "COMPLETED.\n");
}
