/* A minimal compiled client of the warm core's socket, for benchmarks/run.py only (not shipped):
 * what a hook call would cost if the process the runtime starts were not a Python interpreter.
 *
 *   hookgate_client SOCKET IDENTITY_FILE RUNTIME < payload.json
 *
 * It speaks hookgate-warm/1 as hookgate/client.py does (length-prefixed frames: protocol,
 * identity, runtime, event hint, cwd, umask, payload, then the environment; the core answers "+",
 * then ok, stdout, stderr, exit code). The benchmark hands it the socket and the identity the
 * Python client would work out (the project root walk, the hash and hookgate's version and place);
 * a shipped client would have to do that itself. Any failure exits 3: the benchmark then fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

static char *buf;
static size_t len, cap;

static void put(const void *data, size_t n) {
    if (len + n > cap) {
        while (len + n > cap) cap = cap ? cap * 2 : 1 << 16;
        if (!(buf = realloc(buf, cap))) exit(3);
    }
    memcpy(buf + len, data, n);
    len += n;
}

static void frame(const void *data, size_t n) {
    unsigned char size[4] = {n >> 24, n >> 16, n >> 8, n};
    put(size, 4);
    put(data, n);
}

static char *slurp(int fd, size_t *n) {
    size_t used = 0, room = 1 << 16;
    char *data = malloc(room);
    ssize_t got;
    while (data && (got = read(fd, data + used, room - used)) > 0) {
        used += got;
        if (used == room && !(data = realloc(data, room *= 2))) exit(3);
    }
    if (!data || got < 0) exit(3);
    *n = used;
    return data;
}

int main(int argc, char **argv) {
    if (argc != 4) return 3;
    FILE *f = fopen(argv[2], "rb");
    char identity[4096];
    size_t identity_len = f ? fread(identity, 1, sizeof identity, f) : 0;
    if (!f || identity_len == 0) return 3;
    fclose(f);
    size_t raw_len;
    char *raw = slurp(0, &raw_len);
    char cwd[4096], umask_text[16];
    if (!getcwd(cwd, sizeof cwd)) return 3;
    mode_t mask = umask(0);
    umask(mask);
    snprintf(umask_text, sizeof umask_text, "%u", (unsigned)mask);

    frame("hookgate-warm/1", 15);
    frame(identity, identity_len);
    frame(argv[3], strlen(argv[3]));
    frame("", 0);
    frame(cwd, strlen(cwd));
    frame(umask_text, strlen(umask_text));
    frame(raw, raw_len);
    for (char **e = environ; *e; e++) frame(*e, strlen(*e));

    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (sock < 0 || strlen(argv[1]) >= sizeof addr.sun_path) return 3;
    strcpy(addr.sun_path, argv[1]);
    if (connect(sock, (struct sockaddr *)&addr, sizeof addr) < 0) return 3;
    for (size_t sent = 0; sent < len;) {
        ssize_t n = write(sock, buf + sent, len - sent);
        if (n <= 0) return 3;
        sent += n;
    }
    shutdown(sock, SHUT_WR);
    char ack;
    if (read(sock, &ack, 1) != 1 || ack != '+') return 3;
    size_t answer_len;
    char *answer = slurp(sock, &answer_len);
    char *part[4];
    uint32_t part_len[4];
    size_t at = 0;
    for (int i = 0; i < 4; i++) {
        if (at + 4 > answer_len) return 3;
        unsigned char *p = (unsigned char *)answer + at;
        part_len[i] = (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
        part[i] = answer + at + 4;
        at += 4 + part_len[i];
        if (at > answer_len) return 3;
    }
    if (part_len[0] != 2 || memcmp(part[0], "ok", 2)) return 3;
    fwrite(part[1], 1, part_len[1], stdout);
    fwrite(part[2], 1, part_len[2], stderr);
    char code[16] = {0};
    memcpy(code, part[3], part_len[3] < 15 ? part_len[3] : 15);
    return atoi(code);
}
