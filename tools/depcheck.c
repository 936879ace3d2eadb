/* xpb-depcheck: the project's one acyclicity check (docs/architecture.md, "Rules").
 *
 *   xpb-depcheck --name NAME --root DIR [--rooms FILE] [--max-lines N]
 *                [--confine SYMBOL=ROOM,...]... [-v] OBJECT...
 *
 * A module is a source file and its header: `run/session` is run/session.c (or .cu) with
 * run/session.h, relative to DIR. Module A uses module B when A's object needs a global symbol
 * that B's object defines (nm), or when A's source or header includes B's header
 * (`#include "..."`, looked up beside the including file, then in DIR). Headers without a
 * source file are modules too. The check fails, naming what it found, when:
 *   - the uses have a circle (each circle is printed with the reason of every arrow);
 *   - with --rooms, a module uses a module of another room that the rooms file does not list
 *     for its room, or the rooms file itself has a circle (a room is a module's first path
 *     component; modules at the top of DIR belong to the room "."):
 *         # comment
 *         room: lower-room lower-room ...
 *   - with --max-lines, a source or header of a module is longer than N lines;
 *   - with --confine, an object outside the listed rooms needs SYMBOL (for example
 *     json_object_get=results: only the results room reads documents by key).
 * Objects are CMake's (<target>.dir/<path>.c.o); the module is the path after ".dir/".
 * Exit status: 0 clean, 1 a finding, 2 a usage or I/O error. Needs nm (binutils). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_PATH 4096

typedef struct edge {
    int to;
    char *why; /* "includes x.h (a.c:12)" or "needs symbol f" */
} edge;

typedef struct module {
    char *name; /* relative to root, without extension */
    char *files[4];
    int n_files;
    int has_object;
    edge *out;
    int n_out, cap_out;
    /* Tarjan */
    int index, low, on_stack, scc;
} module;

typedef struct symdef {
    char *sym;
    int module; /* -1: defined by several objects (ignored) */
} symdef;

static module *mods;
static int n_mods, cap_mods;
static symdef *defs;
static size_t n_defs, cap_defs;
static const char *root;
static int verbose;
static int findings;

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "xpb-depcheck: out of memory\n");
        exit(2);
    }
    return q;
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d) {
        fprintf(stderr, "xpb-depcheck: out of memory\n");
        exit(2);
    }
    return d;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, f);
    if (vasprintf(&s, f, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s) {
        fprintf(stderr, "xpb-depcheck: out of memory\n");
        exit(2);
    }
    return s;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* ---- modules ---- */

static int find_module(const char *name)
{
    for (int i = 0; i < n_mods; i++)
        if (strcmp(mods[i].name, name) == 0)
            return i;
    return -1;
}

/* The module `name` (created with its existing files when new). */
static int module_of(const char *name)
{
    int i = find_module(name);
    if (i >= 0)
        return i;
    if (n_mods == cap_mods) {
        cap_mods = cap_mods ? 2 * cap_mods : 64;
        mods = xrealloc(mods, (size_t)cap_mods * sizeof *mods);
    }
    module *m = &mods[n_mods];
    memset(m, 0, sizeof *m);
    m->name = xstrdup(name);
    m->index = -1;
    static const char *const exts[] = {".c", ".cu", ".h", ".cuh"};
    for (size_t e = 0; e < sizeof exts / sizeof exts[0]; e++) {
        char *path = fmt("%s/%s%s", root, name, exts[e]);
        if (is_file(path))
            m->files[m->n_files++] = path;
        else
            free(path);
    }
    return n_mods++;
}

static void add_edge(int from, int to, char *why)
{
    module *m = &mods[from];
    if (from == to) {
        free(why);
        return;
    }
    for (int i = 0; i < m->n_out; i++)
        if (m->out[i].to == to) {
            free(why);
            return;
        }
    if (m->n_out == m->cap_out) {
        m->cap_out = m->cap_out ? 2 * m->cap_out : 8;
        m->out = xrealloc(m->out, (size_t)m->cap_out * sizeof *m->out);
    }
    m->out[m->n_out++] = (edge){to, why};
}

/* The room of a module: its first path component, "." at the top of the root. */
static void room_of(const char *name, char *out, size_t size)
{
    const char *slash = strchr(name, '/');
    if (!slash)
        snprintf(out, size, ".");
    else
        snprintf(out, size, "%.*s", (int)(slash - name), name);
}

/* "dir/a/b.c.o" after ".dir/" -> "a/b" */
static char *object_module(const char *obj)
{
    const char *p = strstr(obj, ".dir/");
    const char *rel = p ? p + 5 : strrchr(obj, '/') ? strrchr(obj, '/') + 1 : obj;
    char *name = xstrdup(rel);
    for (int k = 0; k < 2; k++) { /* ".c.o" */
        char *dot = strrchr(name, '.');
        char *slash = strrchr(name, '/');
        if (dot && (!slash || dot > slash))
            *dot = 0;
    }
    /* CMake spells ".." as "__" for sources outside the target's folder */
    while (strncmp(name, "__/", 3) == 0)
        memmove(name, name + 3, strlen(name + 3) + 1);
    return name;
}

/* ---- symbols (nm) ---- */

static int symdef_cmp(const void *a, const void *b)
{
    return strcmp(((const symdef *)a)->sym, ((const symdef *)b)->sym);
}

static FILE *nm_open(const char *opt, const char *obj)
{
    char *cmd = fmt("nm -P %s '%s' 2>/dev/null", opt, obj);
    FILE *f = popen(cmd, "r");
    free(cmd);
    if (!f) {
        fprintf(stderr, "xpb-depcheck: cannot run nm on %s: %s\n", obj, strerror(errno));
        exit(2);
    }
    return f;
}

static void read_definitions(const char *obj, int module)
{
    FILE *f = nm_open("--defined-only", obj);
    char line[8192], sym[4096], type[8];
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%4095s %7s", sym, type) != 2)
            continue;
        /* strong global definitions only: weak and common symbols may be defined anywhere */
        if (!strchr("ABDGRST", type[0]))
            continue;
        if (n_defs == cap_defs) {
            cap_defs = cap_defs ? 2 * cap_defs : 1024;
            defs = xrealloc(defs, cap_defs * sizeof *defs);
        }
        defs[n_defs++] = (symdef){xstrdup(sym), module};
    }
    if (pclose(f) != 0) {
        fprintf(stderr, "xpb-depcheck: nm failed on %s\n", obj);
        exit(2);
    }
}

static const symdef *find_def(const char *sym)
{
    symdef key = {(char *)sym, 0};
    return bsearch(&key, defs, n_defs, sizeof *defs, symdef_cmp);
}

typedef struct confine {
    char *sym;
    char *rooms; /* ",results,check," */
} confine;

static void read_uses(const char *obj, int module, const confine *conf, int n_conf)
{
    FILE *f = nm_open("--undefined-only", obj);
    char line[8192], sym[4096];
    char room[256], key[260];
    room_of(mods[module].name, room, sizeof room);
    snprintf(key, sizeof key, ",%s,", room);
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%4095s", sym) != 1)
            continue;
        for (int c = 0; c < n_conf; c++)
            if (strcmp(conf[c].sym, sym) == 0 && !strstr(conf[c].rooms, key)) {
                printf("CONFINED: %s needs %s, which only the rooms %s may use\n",
                       mods[module].name, sym, conf[c].rooms);
                findings++;
            }
        const symdef *d = find_def(sym);
        if (d && d->module >= 0)
            add_edge(module, d->module, fmt("needs %s", sym));
    }
    pclose(f);
}

/* ---- includes ---- */

/* The module an include names, or -1 when it is outside the root (system and SDK headers). */
static int include_target(const char *including, const char *inc)
{
    const char *slash = strrchr(including, '/');
    char *cand[2] = {
        fmt("%.*s/%s", slash ? (int)(slash - including) : 1, slash ? including : ".", inc),
        fmt("%s/%s", root, inc)};
    int found = -1;
    for (int k = 0; k < 2 && found == -1; k++) {
        char real[MAX_PATH], realroot[MAX_PATH];
        if (!is_file(cand[k]) || !realpath(cand[k], real) || !realpath(root, realroot))
            continue;
        size_t n = strlen(realroot);
        if (strncmp(real, realroot, n) != 0 || real[n] != '/') {
            found = -2;
            break;
        }
        char *name = xstrdup(real + n + 1);
        char *dot = strrchr(name, '.');
        if (dot && dot > name && !strchr(dot, '/'))
            *dot = 0;
        found = module_of(name);
        free(name);
    }
    free(cand[0]);
    free(cand[1]);
    return found >= 0 ? found : -1;
}

static void scan_includes(int module)
{
    for (int fi = 0; fi < mods[module].n_files; fi++) {
        const char *path = mods[module].files[fi];
        FILE *f = fopen(path, "r");
        if (!f) {
            fprintf(stderr, "xpb-depcheck: cannot read %s: %s\n", path, strerror(errno));
            exit(2);
        }
        char line[8192], inc[MAX_PATH];
        int lineno = 0;
        while (fgets(line, sizeof line, f)) {
            lineno++;
            const char *p = line;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p++ != '#')
                continue;
            while (*p == ' ' || *p == '\t')
                p++;
            if (sscanf(p, "include \"%4095[^\"]\"", inc) != 1)
                continue;
            int to = include_target(path, inc);
            if (to >= 0)
                add_edge(module, to,
                         fmt("includes %s (%s:%d)", inc, path + strlen(root) + 1, lineno));
        }
        fclose(f);
    }
}

static void check_lengths(int module, long max_lines)
{
    for (int fi = 0; fi < mods[module].n_files; fi++) {
        FILE *f = fopen(mods[module].files[fi], "r");
        if (!f)
            continue;
        long lines = 0;
        int c;
        while ((c = getc(f)) != EOF)
            lines += c == '\n';
        fclose(f);
        if (lines > max_lines) {
            printf("TOO LONG: %s has %ld lines (at most %ld: split it by concept)\n",
                   mods[module].files[fi], lines, max_lines);
            findings++;
        }
    }
}

/* ---- circles ---- */

static int *stack;
static int sp, next_index, n_sccs;

static void strongconnect(int v)
{
    module *m = &mods[v];
    m->index = m->low = next_index++;
    stack[sp++] = v;
    m->on_stack = 1;
    for (int i = 0; i < m->n_out; i++) {
        int w = m->out[i].to;
        if (mods[w].index < 0) {
            strongconnect(w);
            if (mods[w].low < m->low)
                m->low = mods[w].low;
        } else if (mods[w].on_stack && mods[w].index < m->low) {
            m->low = mods[w].index;
        }
    }
    if (m->low == m->index) {
        int w;
        do {
            w = stack[--sp];
            mods[w].on_stack = 0;
            mods[w].scc = n_sccs;
        } while (w != v);
        n_sccs++;
    }
}

/* Prints one shortest circle through `start` inside its strongly connected component. */
static void print_circle(int start)
{
    int *prev = malloc((size_t)n_mods * sizeof *prev);
    int *prev_edge = malloc((size_t)n_mods * sizeof *prev_edge);
    int *queue = malloc((size_t)n_mods * sizeof *queue);
    if (!prev || !prev_edge || !queue)
        exit(2);
    for (int i = 0; i < n_mods; i++)
        prev[i] = -2;
    int head = 0, tail = 0, found = -1;
    queue[tail++] = start;
    prev[start] = -1;
    while (head < tail && found < 0) {
        int v = queue[head++];
        for (int i = 0; i < mods[v].n_out; i++) {
            int w = mods[v].out[i].to;
            if (mods[w].scc != mods[start].scc)
                continue;
            if (w == start) {
                found = v;
                prev_edge[start] = i;
                break;
            }
            if (prev[w] == -2) {
                prev[w] = v;
                prev_edge[w] = i;
                queue[tail++] = w;
            }
        }
    }
    /* walk back from `found` to start, then print forwards */
    int path[4096], n = 0;
    for (int v = found; v >= 0 && n < 4096; v = prev[v])
        path[n++] = v;
    for (int k = n - 1; k >= 0; k--) {
        int v = path[k];
        int next = k > 0 ? path[k - 1] : start;
        int e = k > 0 ? prev_edge[next] : prev_edge[start];
        printf("    %s -> %s: %s\n", mods[v].name, mods[next].name, mods[v].out[e].why);
    }
    free(prev);
    free(prev_edge);
    free(queue);
}

static void find_circles(void)
{
    stack = malloc((size_t)n_mods * sizeof *stack);
    if (!stack)
        exit(2);
    for (int v = 0; v < n_mods; v++)
        if (mods[v].index < 0)
            strongconnect(v);
    int *size = calloc((size_t)n_sccs, sizeof *size);
    if (!size)
        exit(2);
    for (int v = 0; v < n_mods; v++)
        size[mods[v].scc]++;
    for (int s = 0; s < n_sccs; s++) {
        if (size[s] < 2)
            continue;
        findings++;
        printf("CIRCLE of %d modules:", size[s]);
        int first = -1;
        for (int v = 0; v < n_mods; v++)
            if (mods[v].scc == s) {
                printf(" %s", mods[v].name);
                if (first < 0)
                    first = v;
            }
        printf("\n  for example:\n");
        print_circle(first);
    }
    free(size);
    free(stack);
}

/* ---- rooms ---- */

typedef struct room {
    char name[256];
    char *allowed; /* " a b c " */
    int line;
} room;

static room *rooms;
static int n_rooms;

static int find_room(const char *name)
{
    for (int i = 0; i < n_rooms; i++)
        if (strcmp(rooms[i].name, name) == 0)
            return i;
    return -1;
}

static void read_rooms(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "xpb-depcheck: cannot read %s: %s\n", path, strerror(errno));
        exit(2);
    }
    char line[4096];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *colon = strchr(line, ':');
        char name[256];
        if (!colon) {
            if (strspn(line, " \t\r\n") != strlen(line)) {
                fprintf(stderr, "%s:%d: expected 'room: lower-room ...'\n", path, lineno);
                exit(2);
            }
            continue;
        }
        if (sscanf(line, " %255[^: \t]", name) != 1) {
            fprintf(stderr, "%s:%d: expected a room name before ':'\n", path, lineno);
            exit(2);
        }
        if (find_room(name) >= 0) {
            fprintf(stderr, "%s:%d: room '%s' is listed twice\n", path, lineno, name);
            exit(2);
        }
        rooms = xrealloc(rooms, (size_t)(n_rooms + 1) * sizeof *rooms);
        room *r = &rooms[n_rooms++];
        snprintf(r->name, sizeof r->name, "%s", name);
        char *list = colon + 1;
        list[strcspn(list, "\r\n")] = 0;
        r->allowed = fmt(" %s ", list);
        for (char *t = r->allowed; *t; t++)
            if (*t == '\t')
                *t = ' ';
        r->line = lineno;
    }
    fclose(f);
    /* every listed lower room exists, and a room may use only rooms listed before it: the
     * file is the layering, bottom first, so it cannot hold a circle */
    for (int i = 0; i < n_rooms; i++) {
        char *copy = xstrdup(rooms[i].allowed);
        for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " ")) {
            int j = find_room(tok);
            if (j < 0) {
                fprintf(stderr, "%s:%d: room '%s' uses '%s', which is not a room of the file\n",
                        path, rooms[i].line, rooms[i].name, tok);
                exit(2);
            }
            if (j >= i) {
                printf("ROOM ORDER: %s:%d: room '%s' uses '%s', which is not below it (a room "
                       "may use only rooms listed before it)\n",
                       path, rooms[i].line, rooms[i].name, tok);
                findings++;
            }
        }
        free(copy);
    }
}

static void check_rooms(const char *path)
{
    for (int v = 0; v < n_mods; v++) {
        char from[256], to[256];
        room_of(mods[v].name, from, sizeof from);
        int rf = find_room(from);
        if (rf < 0) {
            printf("UNKNOWN ROOM: %s is in room '%s', which %s does not list\n", mods[v].name, from,
                   path);
            findings++;
            continue;
        }
        for (int i = 0; i < mods[v].n_out; i++) {
            room_of(mods[mods[v].out[i].to].name, to, sizeof to);
            if (strcmp(from, to) == 0)
                continue;
            char key[260];
            snprintf(key, sizeof key, " %s ", to);
            if (!strstr(rooms[rf].allowed, key)) {
                printf("WRONG WAY: %s -> %s: %s (room '%s' may use only:%s)\n", mods[v].name,
                       mods[mods[v].out[i].to].name, mods[v].out[i].why, from, rooms[rf].allowed);
                findings++;
            }
        }
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: xpb-depcheck --name NAME --root DIR [--rooms FILE] [--max-lines N] "
                    "[--confine SYMBOL=ROOM,...]... [-v] OBJECT...\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *name = NULL, *rooms_file = NULL;
    long max_lines = 0;
    confine conf[32];
    int n_conf = 0;
    int first_obj = argc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
            name = argv[++i];
        else if (strcmp(argv[i], "--root") == 0 && i + 1 < argc)
            root = argv[++i];
        else if (strcmp(argv[i], "--rooms") == 0 && i + 1 < argc)
            rooms_file = argv[++i];
        else if (strcmp(argv[i], "--max-lines") == 0 && i + 1 < argc)
            max_lines = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--confine") == 0 && i + 1 < argc && n_conf < 32) {
            char *eq = strchr(argv[++i], '=');
            if (!eq)
                usage();
            conf[n_conf].sym = xstrdup(argv[i]);
            conf[n_conf].sym[eq - argv[i]] = 0;
            conf[n_conf].rooms = fmt(",%s,", eq + 1);
            n_conf++;
        } else if (strcmp(argv[i], "-v") == 0)
            verbose = 1;
        else if (argv[i][0] == '-')
            usage();
        else {
            first_obj = i;
            break;
        }
    }
    if (!name || !root || first_obj >= argc)
        usage();
    if (rooms_file)
        read_rooms(rooms_file);

    /* objects may come as one ';'-separated argument (a CMake list) */
    char **objs = NULL;
    int n_objs = 0;
    for (int i = first_obj; i < argc; i++) {
        char *copy = xstrdup(argv[i]);
        for (char *tok = strtok(copy, ";"); tok; tok = strtok(NULL, ";")) {
            objs = xrealloc(objs, (size_t)(n_objs + 1) * sizeof *objs);
            objs[n_objs++] = xstrdup(tok);
        }
        free(copy);
    }
    int *obj_mod = xrealloc(NULL, (size_t)n_objs * sizeof *obj_mod);
    for (int i = 0; i < n_objs; i++) {
        char *m = object_module(objs[i]);
        obj_mod[i] = module_of(m);
        mods[obj_mod[i]].has_object = 1;
        free(m);
        read_definitions(objs[i], obj_mod[i]);
    }
    qsort(defs, n_defs, sizeof *defs, symdef_cmp);
    for (size_t i = 1; i < n_defs; i++) /* defined twice: nobody's */
        if (strcmp(defs[i].sym, defs[i - 1].sym) == 0 && defs[i].module != defs[i - 1].module)
            defs[i].module = defs[i - 1].module = -1;
    for (int i = 0; i < n_objs; i++)
        read_uses(objs[i], obj_mod[i], conf, n_conf);
    for (int v = 0; v < n_mods; v++) /* grows while headers are found */
        scan_includes(v);
    if (max_lines > 0)
        for (int v = 0; v < n_mods; v++)
            check_lengths(v, max_lines);
    int n_edges = 0;
    for (int v = 0; v < n_mods; v++) {
        n_edges += mods[v].n_out;
        if (verbose) {
            printf("%s ->", mods[v].name);
            for (int i = 0; i < mods[v].n_out; i++)
                printf(" %s", mods[mods[v].out[i].to].name);
            printf("\n");
        }
    }
    find_circles();
    if (rooms_file)
        check_rooms(rooms_file);
    /* the object list and the confinements are main's own (the tables are file-scope and live
     * to the end) */
    for (int i = 0; i < n_objs; i++)
        free(objs[i]);
    free(objs);
    free(obj_mod);
    for (int c = 0; c < n_conf; c++) {
        free(conf[c].sym);
        free(conf[c].rooms);
    }
    if (findings) {
        printf("%s: %d finding(s) in %d modules with %d uses\n", name, findings, n_mods, n_edges);
        return 1;
    }
    printf("%s: %d modules, %d uses, no circle%s\n", name, n_mods, n_edges,
           rooms_file ? ", every use goes down the rooms" : "");
    return 0;
}
