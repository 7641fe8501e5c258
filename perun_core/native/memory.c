/* perun memory collector: an LD_PRELOAD library logging every allocation.
 *
 * Loaded with LD_PRELOAD and PERUN_MEMORY_DIR=<dir>, it replaces malloc,
 * calloc, realloc, free, posix_memalign, aligned_alloc, memalign and valloc
 * with functions that call the real ones (found with dlsym(RTLD_NEXT)) and
 * append records to <dir>/memory.<pid>.log (see perun_log.h for the file
 * layout).  Each thread writes two streams.  Stream 0 holds one 32-byte
 * event per successful call:
 *
 *     uint8  kind        1 malloc, 2 calloc, 3 realloc, 4 free, 5 posix_memalign,
 *                        6 aligned_alloc, 7 memalign, 8 valloc, 9 "realloc from"
 *                        (the block given to the realloc that follows); written last
 *     uint8  reserved[3]
 *     uint32 stack       the id of the call stack (stream 1)
 *     uint64 time        CLOCK_MONOTONIC nanoseconds: taken after the call for
 *                        allocations and before it for frees, so a block freed
 *                        by one thread and handed out again to another is seen
 *                        in the right order
 *     uint64 address     the block returned (freed, for free)
 *     uint64 size        bytes requested (0 for free)
 *
 * Stream 1 defines call stacks as a tree of their suffixes (the file
 * header's version is 2), one 16-byte record per node:
 *
 *     uint32 id          numbered from 1 per process; written last
 *     uint32 parent      the node of the frames outside this one (0: this is
 *                        the outermost frame); equal to id for the empty stack
 *     uint64 address     this node's return address
 *
 * The stack of node n is n's address followed by the stack of its parent,
 * innermost first (the first address is in the function that called the
 * allocator).  A parent is written before its children, so its id is
 * smaller.  A new stack costs one record per frame not already recorded as
 * the outer part of an earlier stack: in a recursive walk, one or two.
 * (Version 1 logs defined each stack whole: a 16-byte record in stream 1
 * pointing to its return addresses in stream 2; the reader still reads them.)
 *
 * Every recorded suffix is found again through a lock-free table of their
 * 64-bit hashes (a hash of a suffix extends the hash of the suffix outside it).
 *
 * The call stack is found by walking frame pointers (a few nanoseconds per
 * frame, exact for code built with -fno-omit-frame-pointer; the walk ends
 * where a frame pointer leaves the thread's stack or a return address
 * leaves the code mapped at start-up) or with backtrace(3) from the unwind
 * tables (exact for any code, but much slower).  PERUN_MEMORY_UNWIND picks:
 * "fp", "dwarf", or "auto" (the default): frame pointers when the allocator
 * was called from the main program's own code, the unwind tables when it was
 * called from a library (strdup, C++'s operator new), whose code has no frame
 * pointers and would hide the frame that called it.
 * PERUN_MEMORY_DEPTH bounds the number of frames (default 32, at most 250).
 *
 * Allocations made while a hook runs (by backtrace, pthread or the log
 * itself) go straight to the real allocator: a thread-local flag guards
 * against recursion.  dlsym may itself call calloc before the real calloc
 * is known; those few early requests are served from a static buffer.
 * Without PERUN_MEMORY_DIR the library only forwards.  It writes nothing to
 * the program's output and never changes its exit status.
 */
#define _GNU_SOURCE
#include "perun_log.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdlib.h>

enum {
    K_MALLOC = 1, K_CALLOC = 2, K_REALLOC = 3, K_FREE = 4,
    K_POSIX_MEMALIGN = 5, K_ALIGNED_ALLOC = 6, K_MEMALIGN = 7, K_VALLOC = 8,
};

enum { K_REALLOC_FROM = 9, STREAM_EVENTS = 0, STREAM_STACKS = 1 };

#define LOG_VERSION 2u

struct mem_event {
    uint8_t kind;
    uint8_t reserved[3];
    uint32_t stack;
    uint64_t time;
    uint64_t address;
    uint64_t size;
};

struct stack_node {
    uint32_t id;
    uint32_t parent;
    uint64_t address;
};

struct stack_slot {
    uint64_t hash;
    uint32_t id;     /* 0 while the node is being written */
    uint32_t reserved;
};

#define MAX_FRAMES 250
#define TABLE_SLOTS ((uint64_t)1 << 20)
#define TABLE_PROBES 64

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);

static __thread int in_hook __attribute__((tls_model("initial-exec")));
static __thread int resolving __attribute__((tls_model("initial-exec")));
static __thread struct plog_cursor cursor __attribute__((tls_model("initial-exec")));
static __thread struct plog_cursor stack_cursor __attribute__((tls_model("initial-exec")));
static __thread uintptr_t stack_high __attribute__((tls_model("initial-exec")));

enum { UNWIND_AUTO, UNWIND_FP, UNWIND_DWARF };

static int active;
static int unwind_mode = UNWIND_AUTO;
static uintptr_t main_low, main_high;  /* the main program's executable segment */
static int depth = 32;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static struct stack_slot *table;
static uint32_t next_stack_id = 1;

/* -- the bootstrap buffer for allocations during dlsym ------------------------- */

static char boot_buffer[16384] __attribute__((aligned(16)));
static size_t boot_used;

static int from_boot(const void *pointer) {
    return (const char *)pointer >= boot_buffer && (const char *)pointer < boot_buffer + sizeof boot_buffer;
}

static void *boot_alloc(size_t size) {
    size_t rounded = (size + 15) & ~(size_t)15;
    size_t offset = __atomic_fetch_add(&boot_used, rounded, __ATOMIC_SEQ_CST);
    if (offset + rounded > sizeof boot_buffer) return NULL;
    return boot_buffer + offset;  /* static storage is zeroed and never reused */
}

static void resolve(void) {
    resolving = 1;
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_free = dlsym(RTLD_NEXT, "free");
    real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    real_memalign = dlsym(RTLD_NEXT, "memalign");
    real_valloc = dlsym(RTLD_NEXT, "valloc");
    resolving = 0;
}

/* -- executable ranges, to tell return addresses from garbage ----------------------- */

#define MAX_RANGES 512
static uintptr_t code_low[MAX_RANGES], code_high[MAX_RANGES];
static int code_ranges;

static uintptr_t parse_hex_word(const char **text) {
    uintptr_t value = 0;
    for (;; (*text)++) {
        char c = **text;
        int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (digit < 0) return value;
        value = value * 16 + (uintptr_t)digit;
    }
}

static void add_range(const char *line) {
    const char *p = line;
    uintptr_t low = parse_hex_word(&p);
    if (*p++ != '-') return;
    uintptr_t high = parse_hex_word(&p);
    if (*p++ != ' ' || p[2] != 'x' || code_ranges >= MAX_RANGES) return;
    code_low[code_ranges] = low;  /* /proc/self/maps lists ranges in ascending order */
    code_high[code_ranges] = high;
    code_ranges++;
}

/* The executable mappings at start-up (the program and the libraries it links). */
static void load_code_ranges(void) {
    char chunk[4096], line[256];
    size_t used = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t got;
    while ((got = read(fd, chunk, sizeof chunk)) > 0) {
        for (ssize_t i = 0; i < got; i++) {
            if (chunk[i] == '\n') {
                line[used] = '\0';
                add_range(line);
                used = 0;
            } else if (used + 1 < sizeof line) {
                line[used++] = chunk[i];
            }
        }
    }
    close(fd);
}

static int is_code(uintptr_t address) {
    if (address >= main_low && address < main_high) return 1;  /* most frames: no search */
    int low = 0, high = code_ranges - 1;
    while (low <= high) {
        int middle = (low + high) / 2;
        if (address < code_low[middle]) high = middle - 1;
        else if (address >= code_high[middle]) low = middle + 1;
        else return 1;
    }
    return 0;
}

/* -- set-up -------------------------------------------------------------------- */

static void thread_exit(void *unused) {
    (void)unused;
    in_hook = 1;
    plog_release(&cursor);
    plog_release(&stack_cursor);
}

static struct stack_slot *new_table(void) {
    void *slots = mmap(NULL, TABLE_SLOTS * sizeof(struct stack_slot), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (slots == MAP_FAILED) return NULL;
    /* a probe of a new stack lands on a random slot: huge pages spare most of the TLB misses */
    madvise(slots, TABLE_SLOTS * sizeof(struct stack_slot), MADV_HUGEPAGE);
    return slots;
}

static void child_after_fork(void) {
    /* the parent's stack ids mean nothing in the child's own log */
    int saved_errno = errno;
    if (table != NULL) munmap(table, TABLE_SLOTS * sizeof(struct stack_slot));
    table = new_table();
    next_stack_id = 1;
    errno = saved_errno;
    plog_after_fork_child();
}

static int main_bias(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    *(uint64_t *)data = (uint64_t)info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type == PT_LOAD && (segment->p_flags & PF_X)) {
            main_low = info->dlpi_addr + segment->p_vaddr;
            main_high = main_low + segment->p_memsz;
        }
    }
    return 1;  /* the first object is the main program */
}

static void setup(void) {
    if (real_malloc == NULL) resolve();
    const char *dir = getenv("PERUN_MEMORY_DIR");
    if (dir == NULL || *dir == '\0') return;
    const char *unwind = getenv("PERUN_MEMORY_UNWIND");
    if (unwind != NULL && strcmp(unwind, "dwarf") == 0) unwind_mode = UNWIND_DWARF;
    if (unwind != NULL && strcmp(unwind, "fp") == 0) unwind_mode = UNWIND_FP;
    const char *limit = getenv("PERUN_MEMORY_DEPTH");
    if (limit != NULL) {
        int value = atoi(limit);
        depth = value < 1 ? 1 : value > MAX_FRAMES ? MAX_FRAMES : value;
    }
    if (unwind_mode != UNWIND_FP) {
        void *warm[2];
        backtrace(warm, 2);  /* loads libgcc_s now rather than inside some later hook */
    }
    uint64_t bias = 0;
    dl_iterate_phdr(main_bias, &bias);
    load_code_ranges();
    table = new_table();
    pthread_key_create(&exit_key, thread_exit);
    pthread_atfork(NULL, NULL, child_after_fork);
    plog_version = LOG_VERSION;
    if (plog_open(dir, "memory", bias) == 0) __atomic_store_n(&active, 1, __ATOMIC_RELEASE);
}

static void ensure_setup(void) {
    int saved_errno = errno;  /* set-up may run inside the program's first malloc */
    in_hook = 1;
    pthread_once(&once, setup);
    in_hook = 0;
    errno = saved_errno;
}

__attribute__((constructor)) static void on_load(void) {
    ensure_setup();
}

__attribute__((destructor)) static void on_unload(void) {
    in_hook = 1;
    if (active) plog_write_maps();  /* libraries loaded with dlopen since the start */
}

/* -- recording ----------------------------------------------------------------- */

static uintptr_t thread_stack_high(void) {
    if (stack_high == 0) {
        pthread_attr_t attr;
        void *low;
        size_t size;
        stack_high = UINTPTR_MAX;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &low, &size) == 0) stack_high = (uintptr_t)low + size;
            pthread_attr_destroy(&attr);
        }
        pthread_setspecific(exit_key, &cursor);
    }
    return stack_high;
}

/* Return addresses of the hook's caller and its callers, by frame pointers.
 * The walk stops at a frame pointer outside this thread's stack or a return
 * address outside the code mapped at start-up: code without frame pointers
 * (the C library's start-up, for one) leaves other values in the register. */
static int walk_frames(uint64_t *out, void *hook_frame) {
    uintptr_t high = thread_stack_high();
    uintptr_t frame = (uintptr_t)hook_frame;
    int count = 0;
    out[count++] = ((uintptr_t *)frame)[1];
    while (count < depth) {
        uintptr_t next = ((uintptr_t *)frame)[0];
        if (next <= frame || next + 16 > high || (next & 7) != 0) break;
        uintptr_t ret = ((uintptr_t *)next)[1];
        if (!is_code(ret)) break;
        out[count++] = ret;
        frame = next;
    }
    return count;
}

/* Define one node of the stack tree (see stream 1 above); its id, or 0 when the log is full. */
static uint32_t write_node(uint64_t address, uint32_t parent, int empty) {
    stack_cursor.stream = STREAM_STACKS;
    struct stack_node *node = (struct stack_node *)plog_reserve(&stack_cursor, sizeof(struct stack_node));
    if (node == NULL) return 0;
    uint32_t id = __atomic_fetch_add(&next_stack_id, 1, __ATOMIC_RELAXED);
    node->parent = empty ? id : parent;
    node->address = address;
    __atomic_store_n(&node->id, id, __ATOMIC_RELEASE);
    return id;
}

#define EMPTY_STACK_HASH 0x9E3779B97F4A7C15ull

/* A call stack found before the real allocator runs: its frames, the hash of each suffix
 * (hashes[i] covers frames[i..count-1]) and the table slot where the search for the whole
 * stack starts.  That slot and the one of the stack without its innermost frame are prefetched
 * then, so that the cache misses of a new stack (random slots of a large table) overlap the
 * allocator's own work instead of following it. */
struct found_stack {
    int count;
    uint64_t frames[MAX_FRAMES + 2];
    uint64_t hashes[MAX_FRAMES + 2];
};

static __attribute__((noinline)) void find_stack(struct found_stack *found, void *hook_frame) {
    uintptr_t caller = ((uintptr_t *)hook_frame)[1];
    int dwarf = unwind_mode == UNWIND_DWARF
        || (unwind_mode == UNWIND_AUTO && (caller < main_low || caller >= main_high));
    if (dwarf) {
        void *raw[MAX_FRAMES + 2];
        thread_stack_high();
        int got = backtrace(raw, depth + 2);  /* [0] is here, [1] in the hook */
        found->count = got > 2 ? got - 2 : 0;
        for (int i = 0; i < found->count; i++) found->frames[i] = (uint64_t)(uintptr_t)raw[i + 2];
    } else {
        found->count = walk_frames(found->frames, hook_frame);
    }
    uint64_t hash = 1469598103934665603ull;
    for (int i = found->count - 1; i >= 0; i--) {
        hash = (hash ^ found->frames[i]) * 1099511628211ull;
        hash ^= hash >> 29;
        found->hashes[i] = hash | 1;
    }
    if (found->count == 0) found->hashes[0] = EMPTY_STACK_HASH;
    if (table != NULL) {
        __builtin_prefetch(&table[found->hashes[0] & (TABLE_SLOTS - 1)], 1, 3);
        if (found->count > 1) __builtin_prefetch(&table[found->hashes[1] & (TABLE_SLOTS - 1)], 0, 3);
    }
}

/* The id of the recorded stack with this hash; 0 if there is none (or it is still being written). */
static uint32_t table_find(uint64_t hash) {
    uint64_t slot = hash & (TABLE_SLOTS - 1);
    for (int probe = 0; probe < TABLE_PROBES; probe++, slot = (slot + 1) & (TABLE_SLOTS - 1)) {
        uint64_t seen = __atomic_load_n(&table[slot].hash, __ATOMIC_ACQUIRE);
        if (seen == 0) return 0;
        if (seen == hash) return __atomic_load_n(&table[slot].id, __ATOMIC_ACQUIRE);
    }
    return 0;
}

/* Remember node id as the stack with this hash (unless another thread did, or the table is crowded there). */
static void table_put(uint64_t hash, uint32_t id) {
    uint64_t slot = hash & (TABLE_SLOTS - 1);
    for (int probe = 0; probe < TABLE_PROBES; probe++, slot = (slot + 1) & (TABLE_SLOTS - 1)) {
        struct stack_slot *entry = &table[slot];
        uint64_t expected = 0;
        if (__atomic_compare_exchange_n(&entry->hash, &expected, hash, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&entry->id, id, __ATOMIC_RELEASE);
            return;
        }
        if (expected == hash) return;
    }
}

/* The id of this call stack; the nodes it lacks are written to the stack stream first. */
static uint32_t intern_stack(const struct found_stack *found) {
    int count = found->count;
    if (count == 0) {
        uint32_t id = table != NULL ? table_find(EMPTY_STACK_HASH) : 0;
        if (id == 0 && (id = write_node(0, 0, 1)) != 0 && table != NULL) table_put(EMPTY_STACK_HASH, id);
        return id;
    }
    uint32_t parent = 0;
    int known = count;  /* frames[known..] are recorded as node `parent` */
    if (table != NULL) {
        for (int i = 0; i < count; i++) {
            uint32_t id = table_find(found->hashes[i]);
            if (id != 0) {
                if (i == 0) return id;
                parent = id;
                known = i;
                break;
            }
        }
    }
    for (int i = known - 1; i >= 0; i--) {
        parent = write_node(found->frames[i], parent, 0);
        if (parent == 0) return 0;
        if (table != NULL) table_put(found->hashes[i], parent);
    }
    return parent;
}

/* Write one event; the stack id is looked up (and defined) first when *stack is 0. */
static __attribute__((noinline)) void record(int kind, void *address, size_t size, uint64_t stamp,
                                             const struct found_stack *found, uint32_t *stack) {
    if (*stack == 0) *stack = intern_stack(found);
    struct mem_event *event = (struct mem_event *)plog_reserve(&cursor, sizeof(struct mem_event));
    if (event == NULL) return;
    memset(event->reserved, 0, sizeof event->reserved);
    event->stack = *stack;
    event->time = stamp != 0 ? stamp : plog_now();
    event->address = (uint64_t)(uintptr_t)address;
    event->size = (uint64_t)size;
    __atomic_store_n(&event->kind, (uint8_t)kind, __ATOMIC_RELEASE);
}

/* Each hook finds its call stack before calling the real function (see struct found_stack) and
 * writes its event after. */
#define HOOK_ENTER()                                                  \
    int recording = !in_hook;                                         \
    if (recording) {                                                  \
        if (!__atomic_load_n(&active, __ATOMIC_ACQUIRE)) ensure_setup(); \
        recording = __atomic_load_n(&active, __ATOMIC_ACQUIRE);       \
        in_hook = recording;                                          \
    }                                                                 \
    struct found_stack found;                                         \
    uint32_t stack = 0;                                               \
    if (recording) find_stack(&found, __builtin_frame_address(0));

#define HOOK_RECORD(kind, address, size)                                        \
    if (recording) {                                                           \
        if ((address) != NULL) record(kind, address, size, 0, &found, &stack); \
        in_hook = 0;                                                           \
    }

/* -- the interposed functions ---------------------------------------------------- */

void *malloc(size_t size) {
    if (real_malloc == NULL) {
        if (resolving) return boot_alloc(size);
        resolve();
    }
    HOOK_ENTER();
    void *result = real_malloc(size);
    HOOK_RECORD(K_MALLOC, result, size);
    return result;
}

void *calloc(size_t count, size_t size) {
    if (real_calloc == NULL) {
        if (resolving) return size && count > SIZE_MAX / size ? NULL : boot_alloc(count * size);
        resolve();
    }
    HOOK_ENTER();
    void *result = real_calloc(count, size);
    HOOK_RECORD(K_CALLOC, result, count * size);
    return result;
}

void *realloc(void *old, size_t size) {
    if (real_realloc == NULL) {
        if (resolving) return NULL;
        resolve();
    }
    if (from_boot(old)) {
        /* moved out of the bootstrap buffer; its blocks are never given back */
        void *moved = malloc(size);
        if (moved != NULL) {
            size_t room = (size_t)(boot_buffer + sizeof boot_buffer - (char *)old);
            memcpy(moved, old, size < room ? size : room);
        }
        return moved;
    }
    HOOK_ENTER();
    uint64_t before = recording && old != NULL ? plog_now() : 0;
    void *result = real_realloc(old, size);
    if (recording && old != NULL) {
        if (result != NULL) {
            record(K_REALLOC_FROM, old, 0, before, &found, &stack);
        } else if (size == 0) {
            record(K_FREE, old, 0, before, &found, &stack);  /* realloc(p, 0) frees p */
        }
    }
    HOOK_RECORD(K_REALLOC, result, size);
    return result;
}

void free(void *pointer) {
    if (pointer == NULL || from_boot(pointer)) return;
    if (real_free == NULL) resolve();
    HOOK_ENTER();
    uint64_t before = recording ? plog_now() : 0;  /* before the block can be handed out again */
    real_free(pointer);
    if (recording) {
        record(K_FREE, pointer, 0, before, &found, &stack);
        in_hook = 0;
    }
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (real_posix_memalign == NULL) resolve();
    HOOK_ENTER();
    int status = real_posix_memalign(result, alignment, size);
    void *block = status == 0 ? *result : NULL;
    HOOK_RECORD(K_POSIX_MEMALIGN, block, size);
    return status;
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (real_aligned_alloc == NULL) resolve();
    HOOK_ENTER();
    void *result = real_aligned_alloc(alignment, size);
    HOOK_RECORD(K_ALIGNED_ALLOC, result, size);
    return result;
}

void *memalign(size_t alignment, size_t size) {
    if (real_memalign == NULL) resolve();
    HOOK_ENTER();
    void *result = real_memalign(alignment, size);
    HOOK_RECORD(K_MEMALIGN, result, size);
    return result;
}

void *valloc(size_t size) {
    if (real_valloc == NULL) resolve();
    HOOK_ENTER();
    void *result = real_valloc(size);
    HOOK_RECORD(K_VALLOC, result, size);
    return result;
}
