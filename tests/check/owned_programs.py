"""Programs whose slow-down lives in calls of the C library or of a C extension, for the explain tests.

Each is a pair (fast, slow) of one source file; the slow one makes a function of the program (the one an
explanation must name) call the library more.  The C and C++ programs are built with debug information and
frame pointers, so that callgrind and perf both see file, line and stacks.
"""

from __future__ import annotations

# -- C, no recursion: `starts_word` copies the rest of the text (malloc, memcpy, strlen, free) on every call
WORDS_C = r'''#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *text;
static size_t size;

__attribute__((noinline)) static int starts_word(size_t pos) {
    int first = pos == 0 || text[pos - 1] == ' ';
BODY
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoul(argv[1], 0, 10) : 1000;
    text = malloc(n + 1);
    size = n;
    for (size_t i = 0; i < n; i++) text[i] = "lorem ipsum dolor "[i % 18];
    text[n] = 0;
    long words = 0;
    int passes = argc > 2 ? atoi(argv[2]) : 400;
    for (int pass = 0; pass < passes; pass++)
        for (size_t i = 0; i < n; i++) words += starts_word(i);
    printf("%ld\n", words);
    free(text);
    return 0;
}
'''
WORDS_FAST = WORDS_C.replace("BODY", "    return first && text[pos] != ' ';")
WORDS_SLOW = WORDS_C.replace("BODY", """    char *rest = malloc(size - pos + 1);
    memcpy(rest, text + pos, size - pos + 1);
    int found = first && strlen(rest) > 0 && rest[0] != ' ';
    free(rest);
    return found;""")

# -- C, recursion: the recursive `parse` asks strlen for the text's length at every character
NESTED_C = r'''#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *text;
static size_t size, pos;

__attribute__((noinline)) static long parse(int depth) {
    long value = depth;
    while (LIMIT && text[pos] != ')') {
        if (text[pos] == '(') {
            pos++;
            value += parse(depth + 1);
        } else {
            value += text[pos] & 7;
            pos++;
        }
    }
    pos++;
    return value;
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoul(argv[1], 0, 10) : 1000;
    const char *unit = "(a(b(c(d)e)f)g)";
    text = malloc(n + 1);
    for (size = 0; size + 15 <= n; size += 15) memcpy(text + size, unit, 15);
    text[size] = 0;
    long total = 0;
    for (int pass = 0; pass < 30; pass++)
        for (pos = 0; pos < size;) total += parse(0);
    printf("%ld\n", total);
    free(text);
    return 0;
}
'''
NESTED_FAST = NESTED_C.replace("LIMIT", "pos < size")
NESTED_SLOW = NESTED_C.replace("LIMIT", "pos < strlen(text)")

# -- C, qsort: the comparator, called by the C library, formats both keys with snprintf before comparing
SORT_C = r'''#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int id; char name[16]; } item;

__attribute__((noinline)) static int by_name(const void *a, const void *b) {
    const item *x = a, *y = b;
BODY
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoul(argv[1], 0, 10) : 1000;
    item *items = malloc(n * sizeof *items), *work = malloc(n * sizeof *items);
    for (size_t i = 0; i < n; i++) {
        items[i].id = (int)((i * 7919) % n);
        snprintf(items[i].name, sizeof items[i].name, "k%05d", items[i].id % 997);
    }
    long check = 0;
    for (int pass = 0; pass < 20; pass++) {
        memcpy(work, items, n * sizeof *items);
        qsort(work, n, sizeof *work, by_name);
        check += work[pass % n].id;
    }
    printf("%ld\n", check);
    free(items);
    free(work);
    return 0;
}
'''
SORT_FAST = SORT_C.replace("BODY", "    return strcmp(x->name, y->name);")
SORT_SLOW = SORT_C.replace("BODY", """    char kx[40], ky[40];
    snprintf(kx, sizeof kx, "%s/%d", x->name, x->id);
    snprintf(ky, sizeof ky, "%s/%d", y->name, y->id);
    return strcmp(kx, ky);""")

# -- C++, recursion: a dictionary lookup copies the rest of the input into a std::string on every call
# (strlen, operator new, memcpy), called from a recursive descent parser
DICTIONARY_CC = r'''#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

class Dictionary {
public:
    explicit Dictionary(std::vector<std::string> words) : words_(std::move(words)) {}
    __attribute__((noinline)) size_t match(const char *text, size_t length) const {
BODY
    }
private:
    std::vector<std::string> words_;
};

struct Parser {
    const Dictionary &dictionary;
    const char *text;
    size_t size, pos = 0;
    __attribute__((noinline)) long parse_list(int depth) {
        long found = 0;
        while (pos < size && text[pos] != ']') {
            if (text[pos] == '[') { pos++; found += parse_list(depth + 1); continue; }
            size_t length = dictionary.match(text + pos, size - pos);
            found += length > 0;
            pos += length > 0 ? length : 1;
        }
        pos++;
        return found + depth;
    }
};

int main(int argc, char **argv) {
    size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000;
    std::string input;
    while (input.size() < n) input += "[if x [then y] else [z w]] ";
    Dictionary dictionary({"if", "then", "else", "x", "y", "z"});
    long total = 0;
    for (int pass = 0; pass < 30; pass++) {
        Parser parser{dictionary, input.c_str(), input.size()};
        while (parser.pos < parser.size) total += parser.parse_list(0);
    }
    std::printf("%ld\n", total);
    return 0;
}
'''
DICTIONARY_FAST = DICTIONARY_CC.replace("BODY", """        for (const auto &word : words_)
            if (word.size() <= length && std::memcmp(text, word.data(), word.size()) == 0) return word.size();
        return 0;""")
DICTIONARY_SLOW = DICTIONARY_CC.replace("BODY", """        for (const auto &word : words_) {
            std::string rest(text);
            if (rest.compare(0, word.size(), word) == 0) return word.size();
        }
        return 0;""")

# -- C at -O2, no recursion: `checksum` is static inline, so it has no code of its own: its slow version asks strlen
# for the rest of the text at every character
CHECKSUM_C = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline unsigned long checksum(const char *text, size_t n) {
    unsigned long sum = 0;
    for (size_t i = 0; i < n; i++)
BODY
    return sum;
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoul(argv[1], 0, 10) : 1000;
    char *text = malloc(n + 1);
    for (size_t i = 0; i < n; i++) text[i] = (char)('a' + i % 26);
    text[n] = 0;
    printf("%lu\n", checksum(text, n));
    free(text);
    return 0;
}
"""
CHECKSUM_FAST = CHECKSUM_C.replace("BODY", "        sum = sum * 31 + (unsigned char)text[i];")
CHECKSUM_SLOW = CHECKSUM_C.replace("BODY", "        sum = sum * 31 + (unsigned char)text[i] + strlen(text + i) % 7;")
MAKE_C_O2 = "app: app.c\n\tcc -O2 -g -o app app.c\n"

MAKE_C = "app: app.c\n\tcc -O1 -g -fno-omit-frame-pointer -o app app.c\n"
MAKE_CC = "app: app.cc\n\tg++ -O1 -g -fno-omit-frame-pointer -o app app.cc\n"

# -- Python calling a C extension: `fingerprint` hashes each chunk once, then twenty times (hashlib is C code)
HASHES_PY = '''import hashlib
import sys


def fingerprint(chunks):
    digest = 0
    for chunk in chunks:
        for _ in range(ROUNDS):
            digest ^= hashlib.sha256(chunk).digest()[0]
    return digest


def prepare(n):
    return [bytes([i % 251]) * 4096 for i in range(n)]


def main():
    print(fingerprint(prepare(int(sys.argv[1]))))


main()
'''
HASHES_FAST = HASHES_PY.replace("ROUNDS", "1")
HASHES_SLOW = HASHES_PY.replace("ROUNDS", "20")
