"""The files of the synthetic demo project (a C linked-list library) at each commit of its plan."""

from __future__ import annotations

from typing import Any

__all__ = ["files_of"]


def files_of(plan: list[Any], ancestry: list[frozenset[int]], index: int) -> dict[str, bytes]:
    """The whole tree of one commit: the library, its bench and a change log."""
    line = sorted(ancestry[index])
    commit = plan[index]
    scan = commit.factor > 1.0
    iterators = any(plan[i].on_branch for i in line)
    notes = "".join(f"- {plan[i].subject}\n" for i in line)
    header = _HEADER.replace("@VERSION@", f"0.{len(line)}.0")
    if iterators:
        header = header.replace("/* @ITER@ */", _ITER_DECL)
    source = _SOURCE.replace("@SEARCH@", _SEARCH_SCAN if scan else _SEARCH_HASH)
    if commit.factor == 1.25:
        source = source.replace("/* @CACHE@ */", "    /* keys are cached in the node: one load per step */\n")
    return {
        ".gitignore": b"*.o\nsll-bench\n",
        "Makefile": _MAKEFILE.encode(),
        "README.md": _README.encode(),
        "CHANGES.md": ("# Changes\n\n" + notes).encode(),
        "src/sll.h": header.encode(),
        "src/sll.c": source.encode(),
        "src/bench.c": _BENCH_C.encode(),
    }


_README = """# sll

A small singly linked list library in C, used as the demo project of perun.

    make && ./sll-bench --iterations 1000 workloads/small.txt
"""
_MAKEFILE = """CFLAGS ?= -O2 -Wall -Wextra

sll-bench: src/sll.o src/bench.o
\t$(CC) $(CFLAGS) -o $@ $^

clean:
\trm -f src/*.o sll-bench
"""
_HEADER = """#ifndef SLL_H
#define SLL_H

#include <stddef.h>

#define SLL_VERSION "@VERSION@"

typedef struct SLLNode {
    int key;
    struct SLLNode *next;
} SLLNode;

typedef struct SLList {
    SLLNode *head;
    size_t length;
} SLList;

void sll_init(SLList *list);
int sll_insert(SLList *list, int key);
SLLNode *sll_search(SLList *list, int key);
void sll_destroy(SLList *list);
/* @ITER@ */
#endif
"""
_ITER_DECL = "SLLNode *sll_iter_begin(SLList *list);\nSLLNode *sll_iter_next(SLLNode *node);\n"
_SOURCE = """#include <stdlib.h>
#include "sll.h"

void sll_init(SLList *list) {
    list->head = NULL;
    list->length = 0;
}

int sll_insert(SLList *list, int key) {
    SLLNode *node = malloc(sizeof *node);
    if (node == NULL)
        return -1;
    node->key = key;
    node->next = list->head;
    list->head = node;
    list->length++;
    return 0;
}

SLLNode *sll_search(SLList *list, int key) {
@SEARCH@}

void sll_destroy(SLList *list) {
    SLLNode *node = list->head;
    while (node != NULL) {
        SLLNode *next = node->next;
        free(node);
        node = next;
    }
    sll_init(list);
}
"""
_SEARCH_HASH = """    /* a small direct-mapped index of recently found keys */
    static SLLNode *index[64];
    SLLNode *hit = index[(unsigned)key % 64];
    if (hit != NULL && hit->key == key)
        return hit;
    for (SLLNode *node = list->head; node != NULL; node = node->next)
        if (node->key == key)
            return index[(unsigned)key % 64] = node;
    return NULL;
"""
_SEARCH_SCAN = """/* @CACHE@ */    for (SLLNode *node = list->head; node != NULL; node = node->next)
        if (node->key == key)
            return node;
    return NULL;
"""
_BENCH_C = """#include <stdio.h>
#include <stdlib.h>
#include "sll.h"

int main(int argc, char **argv) {
    int iterations = argc > 2 ? atoi(argv[2]) : 1000;
    SLList list;
    sll_init(&list);
    for (int i = 0; i < iterations; i++)
        sll_insert(&list, rand());
    for (int i = 0; i < iterations; i++)
        sll_search(&list, rand());
    sll_destroy(&list);
    return 0;
}
"""
