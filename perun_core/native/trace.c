/* perun trace runtime: the hooks of gcc/clang's -finstrument-functions.
 *
 * A program compiled with -finstrument-functions calls
 * __cyg_profile_func_enter(function, call_site) on entry to every function
 * and __cyg_profile_func_exit on every return.  The C library defines both
 * as empty functions, so such a program runs as usual; preloaded (LD_PRELOAD)
 * in front of the C library, this library's versions take over, and with
 * PERUN_TRACE_DIR=<dir> they append a 16-byte record per recorded entry and
 * exit to <dir>/trace.<pid>.log (layout in perun_log.h; one stream per
 * thread):
 *
 *     uint64 function    the function's address (entry point)
 *     uint64 stamp       CLOCK_MONOTONIC nanoseconds, bit 63 set for an exit;
 *                        written last, so 0 ends a block
 *
 * Which calls are recorded:
 *
 *   PERUN_TRACE_FILTER  a file of lines "<hex address> <n>": functions of the
 *                       main executable by their link-time address (the load
 *                       bias is added here) and their sampling: every n-th
 *                       call is recorded, the 1st, the (n+1)-th, ...
 *   PERUN_TRACE_ALL=1   also record functions that are not listed
 *                       (otherwise only listed ones), with
 *   PERUN_TRACE_SAMPLE  their sampling (default 1: every call).
 *
 * An exit is recorded exactly when its entry was: a per-thread shadow stack
 * remembers the decision.  Calls from signal handlers that interrupt the
 * runtime itself are not recorded.  Without PERUN_TRACE_DIR the hooks
 * return at once.  Set-up happens on the first call of a hook, never in a
 * constructor: when a program also links an older copy of this library,
 * only the copy whose hooks run opens a log.
 */
#define _GNU_SOURCE
#include "perun_log.h"

#include <link.h>
#include <stdlib.h>

#define RUNTIME __attribute__((no_instrument_function))
#define EXIT_BIT ((uint64_t)1 << 63)
#define SLOTS ((uint64_t)1 << 16)
#define SHADOW ((uint64_t)1 << 20)

struct trace_event {
    uint64_t function;
    uint64_t stamp;
};

struct slot {
    uint64_t function;   /* 0: free */
    uint32_t sample;
    uint32_t calls;
};

static int active;
static int record_unlisted = 1;
static uint32_t default_sample = 1;
static int needs_table;
static struct slot *table;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;

static __thread struct plog_cursor cursor __attribute__((tls_model("initial-exec")));
static __thread unsigned char *shadow __attribute__((tls_model("initial-exec")));
static __thread uint64_t depth __attribute__((tls_model("initial-exec")));
static __thread int busy __attribute__((tls_model("initial-exec")));

void __cyg_profile_func_enter(void *function, void *call_site) RUNTIME;
void __cyg_profile_func_exit(void *function, void *call_site) RUNTIME;

/* -- the table of listed functions and their call counters ------------------------ */

static RUNTIME uint64_t slot_of(uint64_t function) {
    uint64_t hash = function * 0x9e3779b97f4a7c15ull;
    return (hash >> 40) & (SLOTS - 1);
}

/* The slot of function, added with the default sampling when add is set; NULL when absent or full. */
static RUNTIME struct slot *lookup(uint64_t function, int add) {
    uint64_t index = slot_of(function);
    for (uint64_t probe = 0; probe < SLOTS; probe++, index = (index + 1) & (SLOTS - 1)) {
        struct slot *entry = &table[index];
        uint64_t seen = __atomic_load_n(&entry->function, __ATOMIC_ACQUIRE);
        if (seen == function) return entry;
        if (seen == 0) {
            if (!add) return NULL;
            if (__atomic_compare_exchange_n(&entry->function, &seen, function, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return entry;
            if (seen == function) return entry;
        }
    }
    return NULL;
}

static RUNTIME int main_bias(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    *(uint64_t *)data = (uint64_t)info->dlpi_addr;
    return 1;
}

static RUNTIME uint64_t parse_hex(const char **text) {
    uint64_t value = 0;
    const char *p = *text;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
    for (;; p++) {
        int digit = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                  : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;
        if (digit < 0) break;
        value = value * 16 + (uint64_t)digit;
    }
    *text = p;
    return value;
}

static RUNTIME void load_filter(const char *path, uint64_t bias) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    off_t size = lseek(fd, 0, SEEK_END);
    char *text = size > 0 ? mmap(NULL, (size_t)size + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                          : MAP_FAILED;
    if (text == MAP_FAILED) {
        close(fd);
        return;
    }
    ssize_t got = pread(fd, text, (size_t)size, 0);
    close(fd);
    text[got > 0 ? got : 0] = '\0';
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\n' || *p == '\t') p++;
        if (!*p) break;
        uint64_t address = parse_hex(&p);
        while (*p == ' ' || *p == '\t') p++;
        uint64_t sample = 0;
        while (*p >= '0' && *p <= '9') sample = sample * 10 + (uint64_t)(*p++ - '0');
        while (*p && *p != '\n') p++;
        if (address == 0) continue;
        struct slot *entry = lookup(address + bias, 1);
        if (entry != NULL) entry->sample = sample == 0 ? 1 : (uint32_t)(sample > 0xffffffffu ? 0xffffffffu : sample);
    }
    munmap(text, (size_t)size + 1);
}

/* -- set-up ------------------------------------------------------------------------- */

static RUNTIME void thread_exit(void *unused) {
    (void)unused;
    busy = 1;
    plog_release(&cursor);
    if (shadow != NULL) munmap(shadow, SHADOW);
    shadow = NULL;
}

static RUNTIME void child_after_fork(void) {
    plog_after_fork_child();
}

static RUNTIME void setup(void) {
    const char *dir = getenv("PERUN_TRACE_DIR");
    if (dir == NULL || *dir == '\0') return;
    const char *all = getenv("PERUN_TRACE_ALL");
    const char *sample = getenv("PERUN_TRACE_SAMPLE");
    const char *filter = getenv("PERUN_TRACE_FILTER");
    uint64_t bias = 0;
    dl_iterate_phdr(main_bias, &bias);
    record_unlisted = filter == NULL || (all != NULL && strcmp(all, "1") == 0);
    if (sample != NULL && atoi(sample) > 1) default_sample = (uint32_t)atoi(sample);
    needs_table = filter != NULL || default_sample > 1;
    if (needs_table) {
        void *slots = mmap(NULL, SLOTS * sizeof(struct slot), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (slots == MAP_FAILED) return;
        table = slots;
        if (filter != NULL) load_filter(filter, bias);
    }
    pthread_key_create(&exit_key, thread_exit);
    pthread_atfork(NULL, NULL, child_after_fork);
    if (plog_open(dir, "trace", bias) == 0) __atomic_store_n(&active, 1, __ATOMIC_RELEASE);
}

static RUNTIME void ensure_setup(void) {
    busy = 1;
    pthread_once(&once, setup);
    busy = 0;
}

/* -- the hooks ------------------------------------------------------------------------ */

static RUNTIME int wanted(uint64_t function) {
    if (!needs_table) return 1;
    struct slot *entry = lookup(function, record_unlisted);
    if (entry == NULL) return record_unlisted && default_sample <= 1;  /* not listed, or the table is full */
    uint32_t sample = entry->sample ? entry->sample : default_sample;
    uint32_t calls = __atomic_fetch_add(&entry->calls, 1, __ATOMIC_RELAXED);
    return sample <= 1 || calls % sample == 0;
}

/* Entries take their time after the bookkeeping, exits before it, so that
 * setting up a new block is not charged to the call being measured. */
static RUNTIME void append_entry(uint64_t function) {
    struct trace_event *event = (struct trace_event *)plog_reserve(&cursor, sizeof(struct trace_event));
    if (event == NULL) return;
    event->function = function;
    __atomic_store_n(&event->stamp, plog_now(), __ATOMIC_RELEASE);
}

static RUNTIME void append_exit(uint64_t function) {
    uint64_t stamp = plog_now() | EXIT_BIT;
    struct trace_event *event = (struct trace_event *)plog_reserve(&cursor, sizeof(struct trace_event));
    if (event == NULL) return;
    event->function = function;
    __atomic_store_n(&event->stamp, stamp, __ATOMIC_RELEASE);
}

void __cyg_profile_func_enter(void *function, void *call_site) {
    (void)call_site;
    if (!__atomic_load_n(&active, __ATOMIC_ACQUIRE)) {
        if (busy) return;
        ensure_setup();
        if (!__atomic_load_n(&active, __ATOMIC_ACQUIRE)) return;
    }
    if (busy) {  /* a signal handler interrupted the runtime: keep the depth right, record nothing */
        uint64_t level = depth++;
        if (shadow != NULL && level < SHADOW) shadow[level] = 0;
        return;
    }
    busy = 1;
    if (shadow == NULL) {
        void *stack = mmap(NULL, SHADOW, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        shadow = stack == MAP_FAILED ? NULL : stack;
        if (shadow != NULL) pthread_setspecific(exit_key, shadow);
    }
    uint64_t level = depth++;
    int record = shadow != NULL && level < SHADOW && wanted((uint64_t)(uintptr_t)function);
    if (shadow != NULL && level < SHADOW) shadow[level] = (unsigned char)record;
    if (record) append_entry((uint64_t)(uintptr_t)function);
    busy = 0;
}

void __cyg_profile_func_exit(void *function, void *call_site) {
    (void)call_site;
    if (!active || depth == 0) return;
    if (busy) {
        depth--;
        return;
    }
    busy = 1;
    uint64_t level = --depth;
    if (shadow != NULL && level < SHADOW && shadow[level]) append_exit((uint64_t)(uintptr_t)function);
    busy = 0;
}
