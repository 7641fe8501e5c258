/* Crash-safe binary event log shared by perun's native collectors.
 *
 * Each process writes its own file, <dir>/<prefix>.<pid>.log.  A process
 * image that finds that name taken (the program called exec without fork,
 * so the image before it wrote the file; or a pid was reused) writes
 * <dir>/<prefix>.<pid>.<n>.log with the first free n = 1, 2, ...: files are
 * created with O_EXCL and never truncated, so no image's records are lost.
 * Its memory map goes to the same name with ".maps".  The file is a
 * sequence of PLOG_BLOCK-sized blocks.  Block 0 holds the file header
 * (struct plog_file_header); every other block belongs to one thread and
 * starts with a struct plog_block_header followed by records of that thread
 * in the order they happened.  A thread may keep several streams of records
 * (the memory collector writes events and call stacks apart); each block
 * holds one stream.  A thread reserves a block under a mutex
 * (fallocate grows the file, mmap maps the block MAP_SHARED) and then
 * appends records to it without any locking.
 *
 * The records live in a shared file mapping, so they reach the page cache
 * as soon as they are stored: a program that crashes, calls _exit or is
 * killed still leaves every complete record behind.  The record formats are
 * defined by the users of this header; each must make sure that a zero in
 * its first written-last word means "no more records in this block", so a
 * torn record at a crash and the unused tail of a block read as the end.
 *
 * fork(): the child gets a new file (by pid) and forgets the blocks of its
 * parent (plog_generation changes, so stale cursors are dropped).  Call
 * plog_after_fork_child() from a pthread_atfork child handler.
 *
 * Nothing here allocates with malloc, so the memory collector can use it
 * from inside its malloc hooks.
 */
#ifndef PERUN_LOG_H
#define PERUN_LOG_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define PLOG_BLOCK ((uint64_t)1 << 20)
#define PLOG_FILE_MAGIC 0x46474c50u  /* "PLGF" */
#define PLOG_BLOCK_MAGIC 0x42474c50u /* "PLGB" */
#define PLOG_VERSION 1u

struct plog_file_header {
    uint32_t magic;
    uint32_t version;
    uint32_t pid;
    uint32_t ppid;
    uint64_t start_ns;     /* CLOCK_MONOTONIC when the log was opened */
    uint64_t block_size;
    uint64_t load_bias;    /* where the main executable is loaded (0 for non-PIE) */
    char kind[16];         /* "memory", "trace" */
    uint64_t resolution_ns; /* of CLOCK_MONOTONIC */
};

struct plog_block_header {   /* 32 bytes, so 32-byte records stay aligned */
    uint32_t magic;
    uint32_t tid;
    uint64_t sequence;     /* blocks of one thread and stream have increasing numbers */
    uint32_t stream;       /* which of the thread's record streams the block holds */
    uint32_t reserved;
    uint64_t reserved2;
};

struct plog_cursor {
    char *base;            /* the mapped block, or NULL */
    uint64_t used;         /* bytes used in it, header included */
    uint64_t generation;   /* plog_generation when the block was taken */
    uint64_t sequence;
    uint64_t offset;       /* where the mapped block is in the file */
    uint32_t tid;
    uint32_t stream;       /* set by the user before the first plog_reserve */
};

static int plog_fd = -1;
static uint64_t plog_end;
static uint64_t plog_generation = 1;
static pthread_mutex_t plog_lock = PTHREAD_MUTEX_INITIALIZER;
static char plog_dir[512];
static char plog_prefix[16];
static uint64_t plog_bias;
static uint32_t plog_version = PLOG_VERSION;  /* a user with its own record layout sets it before plog_open */

static inline uint64_t plog_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint32_t plog_gettid(void) {
    return (uint32_t)syscall(SYS_gettid);
}

/* Append the decimal digits of value to p; returns the new end (no snprintf: no allocation). */
static char *plog_digits(char *p, unsigned long value) {
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value && n < 23);
    while (n) *p++ = digits[--n];
    return p;
}

/* plog_base = dir + "/" + prefix + "." + pid, and + "." + piece when piece > 0. */
static char plog_base[600];

static int plog_set_base(unsigned long piece) {
    size_t dl = strlen(plog_dir), pl = strlen(plog_prefix);
    if (dl + 1 + pl + 2 * 24 + 8 > sizeof plog_base) return -1;
    char *p = plog_base;
    memcpy(p, plog_dir, dl); p += dl;
    *p++ = '/';
    memcpy(p, plog_prefix, pl); p += pl;
    *p++ = '.';
    p = plog_digits(p, (unsigned long)getpid());
    if (piece > 0) {
        *p++ = '.';
        p = plog_digits(p, piece);
    }
    *p = '\0';
    return 0;
}

/* dst = plog_base + suffix. */
static int plog_path(char *dst, size_t room, const char *suffix) {
    size_t bl = strlen(plog_base), sl = strlen(suffix);
    if (bl + sl + 1 > room) return -1;
    memcpy(dst, plog_base, bl);
    memcpy(dst + bl, suffix, sl + 1);
    return 0;
}

/* Append a copy of /proc/self/maps to <base>.maps (symbolization needs it). */
static void plog_write_maps(void) {
    char path[640];
    char buffer[4096];
    if (plog_fd < 0 || plog_path(path, sizeof path, ".maps") != 0) return;
    int in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (in < 0) return;
    int out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (out >= 0) {
        ssize_t got;
        while ((got = read(in, buffer, sizeof buffer)) > 0) {
            ssize_t done = 0;
            while (done < got) {
                ssize_t w = write(out, buffer + done, (size_t)(got - done));
                if (w <= 0) break;
                done += w;
            }
        }
        close(out);
    }
    close(in);
}

/* Create this process image's log: <prefix>.<pid>.log, or the first free <prefix>.<pid>.<n>.log. */
static int plog_open_file(void) {
    char path[640];
    int fd = -1;
    for (unsigned long piece = 0; piece < 10000 && fd < 0; piece++) {
        if (plog_set_base(piece) != 0 || plog_path(path, sizeof path, ".log") != 0) return -1;
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) return -1;
    }
    if (fd < 0) return -1;
    struct plog_file_header header;
    memset(&header, 0, sizeof header);
    header.magic = PLOG_FILE_MAGIC;
    header.version = plog_version;
    header.pid = (uint32_t)getpid();
    header.ppid = (uint32_t)getppid();
    header.start_ns = plog_now();
    header.block_size = PLOG_BLOCK;
    header.load_bias = plog_bias;
    struct timespec resolution;
    header.resolution_ns = clock_getres(CLOCK_MONOTONIC, &resolution) == 0
        ? (uint64_t)resolution.tv_sec * 1000000000ull + (uint64_t)resolution.tv_nsec : 0;
    memcpy(header.kind, plog_prefix, strlen(plog_prefix));  /* plog_open checked that it fits */
    if (pwrite(fd, &header, sizeof header, 0) != (ssize_t)sizeof header || ftruncate(fd, (off_t)PLOG_BLOCK) != 0) {
        close(fd);
        return -1;
    }
    plog_end = PLOG_BLOCK;
    plog_fd = fd;
    return 0;
}

/* Start logging into dir (a writable directory); 0 on success.  errno is left as it was. */
static int plog_open(const char *dir, const char *prefix, uint64_t load_bias) {
    if (strlen(dir) >= sizeof plog_dir || strlen(prefix) >= sizeof plog_prefix) return -1;
    int saved_errno = errno;
    strcpy(plog_dir, dir);
    strcpy(plog_prefix, prefix);
    plog_bias = load_bias;
    int status = plog_open_file();
    if (status == 0) plog_write_maps();
    errno = saved_errno;
    return status;
}

/* In the child of a fork: a log of its own, the parent's blocks forgotten. */
static void plog_after_fork_child(void) {
    pthread_mutex_init(&plog_lock, NULL);
    __atomic_add_fetch(&plog_generation, 1, __ATOMIC_SEQ_CST);
    if (plog_fd < 0) return;
    int saved_errno = errno;
    close(plog_fd);
    plog_fd = -1;
    if (plog_open_file() == 0) plog_write_maps();
    errno = saved_errno;
}

/* Give back the cursor's block (at thread exit). */
static void plog_release(struct plog_cursor *cursor) {
    if (cursor->base != NULL) munmap(cursor->base, PLOG_BLOCK);
    cursor->base = NULL;
}

#ifdef MADV_POPULATE_WRITE
#define PLOG_MADV_POPULATE_WRITE MADV_POPULATE_WRITE
#else
#define PLOG_MADV_POPULATE_WRITE 23  /* Linux 5.14 */
#endif

/* Add the block at offset to the file.  fallocate reserves its disk (or tmpfs) space now, so a full
 * file system makes logging stop here rather than kill the program with SIGBUS on a store into the
 * mapping; file systems without fallocate get a sparse block. */
static int plog_grow(int fd, uint64_t offset) {
    if (fallocate(fd, 0, (off_t)offset, (off_t)PLOG_BLOCK) == 0) return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS) return -1;
    return ftruncate(fd, (off_t)(offset + PLOG_BLOCK));
}

static char *plog_take_block(struct plog_cursor *cursor, uint64_t need) {
    uint64_t generation = __atomic_load_n(&plog_generation, __ATOMIC_ACQUIRE);
    if (cursor->base != NULL) munmap(cursor->base, PLOG_BLOCK);
    cursor->base = NULL;
    if (cursor->generation != generation) {
        cursor->generation = generation;
        cursor->tid = plog_gettid();
        cursor->sequence = 0;
    }
    if (plog_fd < 0 || need + sizeof(struct plog_block_header) > PLOG_BLOCK) return NULL;
    pthread_mutex_lock(&plog_lock);
    uint64_t offset = plog_end;
    int fd = plog_fd;
    int grown = fd >= 0 && plog_grow(fd, offset) == 0;
    if (grown) plog_end = offset + PLOG_BLOCK;
    pthread_mutex_unlock(&plog_lock);
    if (!grown) return NULL;
    void *block = mmap(NULL, PLOG_BLOCK, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
    if (block == MAP_FAILED) return NULL;
    /* Map every page writable now, in one call, instead of taking a write fault per page in the hooks
     * (MAP_POPULATE maps shared file pages read-only, so each first store would still fault).  Older
     * kernels refuse the advice; their pages then fault in one by one. */
    madvise(block, PLOG_BLOCK, PLOG_MADV_POPULATE_WRITE);
    struct plog_block_header *header = block;
    header->tid = cursor->tid;
    header->sequence = cursor->sequence++;
    header->stream = cursor->stream;
    __atomic_store_n(&header->magic, PLOG_BLOCK_MAGIC, __ATOMIC_RELEASE);
    cursor->base = block;
    cursor->offset = offset;
    cursor->used = sizeof(struct plog_block_header) + need;
    return cursor->base + sizeof(struct plog_block_header);
}

/* A fresh block for the cursor with room for need bytes; NULL when logging is off or failed.
 * Runs inside the hooks: the program's errno is left as it was. */
static char *plog_new_block(struct plog_cursor *cursor, uint64_t need) {
    int saved_errno = errno;
    char *room = plog_take_block(cursor, need);
    errno = saved_errno;
    return room;
}

/* Room for need bytes in this thread's block (need must keep records 8-byte aligned). */
static inline char *plog_reserve(struct plog_cursor *cursor, uint64_t need) {
    if (cursor->base != NULL && cursor->generation == plog_generation && cursor->used + need <= PLOG_BLOCK) {
        char *at = cursor->base + cursor->used;
        cursor->used += need;
        return at;
    }
    return plog_new_block(cursor, need);
}

#endif
