/* File-system helpers; see fs.h. */
#include "core/fs.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int pt_make_parent_dirs(const char *file, struct pt_err *e)
{
    char path[4096];
    size_t n = strlen(file);
    if (n >= sizeof path)
        return pt_err_set(e, PT_EUSER, "error: path too long: %.80s...", file);
    memcpy(path, file, n + 1);
    char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;
    *slash = '\0';
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return pt_err_set(e, PT_EUSER, "error: cannot create directory '%s': %s", path,
                              strerror(errno));
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            return pt_err_set(e, PT_EUSER, "error: '%s' exists and is not a directory", path);
        *p = saved;
        if (saved == '\0')
            break;
    }
    return 0;
}
