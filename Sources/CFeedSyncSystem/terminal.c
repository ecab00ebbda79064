#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "system.h"

// What the handlers touch, all prepared before they are installed: a handler calls only
// async-signal-safe functions (write, read, lseek, dup2, tcsetattr, sigaction, raise, kill).
static struct {
    int active;
    int fd;
    int wake;
    struct termios saved, raw;
    char *enter, *leave;
    size_t enter_length, leave_length;
    // Standard error during the session goes to an unnamed file, replayed once the screen is
    // back: a crash's message written on the alternate screen would vanish with it.
    int held_stderr, stderr_file;
} session = {.fd = -1, .wake = -1, .held_stderr = -1, .stderr_file = -1};

static const int ending[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT};
static const int crashing[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT};
static struct sigaction previous[65];

static void write_all(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, bytes, length);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return;
        bytes += written;
        length -= (size_t)written;
    }
}

static void replay_stderr(void) {
    if (session.held_stderr < 0) return;
    dup2(session.held_stderr, STDERR_FILENO);
    char buffer[4096];
    ssize_t count;
    lseek(session.stderr_file, 0, SEEK_SET);
    while ((count = read(session.stderr_file, buffer, sizeof buffer)) > 0) write_all(STDERR_FILENO, buffer, (size_t)count);
    ftruncate(session.stderr_file, 0);
    lseek(session.stderr_file, 0, SEEK_SET);
}

// The screen and mode given back. TCSANOW: draining could wait on a stopped terminal.
static void give_back(void) {
    write_all(session.fd, session.leave, session.leave_length);
    tcsetattr(session.fd, TCSANOW, &session.saved);
}

static void take(void) {
    tcsetattr(session.fd, TCSANOW, &session.raw);
    write_all(session.fd, session.enter, session.enter_length);
}

static void wake(char why) {
    if (session.wake >= 0) write(session.wake, &why, 1);
}

// Ended or crashed: the terminal back, standard error replayed, then the signal as it would
// have been (its earlier handler, or the default: the exit status tells what happened).
static void on_end(int signal) {
    if (session.active) {
        session.active = 0;
        give_back();
        replay_stderr();
    }
    sigaction(signal, &previous[signal], NULL);
    raise(signal);
}

static void on_stop(int signal) {
    (void)signal;
    if (session.active) give_back();
    struct sigaction stop = {.sa_handler = SIG_DFL};
    sigemptyset(&stop.sa_mask);
    struct sigaction mine;
    sigaction(SIGTSTP, &stop, &mine);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTSTP);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(SIGTSTP);
    // Continued (fg): the handler back, the screen taken again when in the foreground.
    sigaction(SIGTSTP, &mine, NULL);
    if (session.active && tcgetpgrp(session.fd) == getpgrp()) take();
    wake('c');
}

static void on_resize(int signal) {
    (void)signal;
    wake('w');
}

static void install(int signal, void (*handler)(int), int flags) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = flags;
    sigaction(signal, &action, &previous[signal]);
}

int fs_terminal_enter(int fd, const char *enter, const char *leave, int wake_fd) {
    if (session.active) return 0;
    if (tcgetattr(fd, &session.saved) != 0) return -1;
    session.fd = fd;
    session.wake = wake_fd;
    free(session.enter);
    free(session.leave);
    session.enter = strdup(enter);
    session.leave = strdup(leave);
    if (!session.enter || !session.leave) return -1;
    session.enter_length = strlen(enter);
    session.leave_length = strlen(leave);
    session.raw = session.saved;
    cfmakeraw(&session.raw);
    session.raw.c_cc[VMIN] = 1;
    session.raw.c_cc[VTIME] = 0;
    if (session.stderr_file < 0) {
        session.stderr_file = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (session.stderr_file >= 0) session.held_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    }
    if (session.held_stderr >= 0) dup2(session.stderr_file, STDERR_FILENO);
    // A stack of its own for the handlers: a stack overflow arrives on the stack it filled.
    static char *alternate;
    if (!alternate && (alternate = malloc(65536))) {
        stack_t stack = {.ss_sp = alternate, .ss_size = 65536};
        sigaltstack(&stack, NULL);
    }
    for (size_t i = 0; i < sizeof ending / sizeof *ending; i++) install(ending[i], on_end, SA_ONSTACK);
    for (size_t i = 0; i < sizeof crashing / sizeof *crashing; i++)
        install(crashing[i], on_end, SA_ONSTACK | SA_NODEFER);
    install(SIGTSTP, on_stop, SA_ONSTACK | SA_RESTART);
    install(SIGWINCH, on_resize, SA_ONSTACK | SA_RESTART);
    take();
    session.active = 1;
    return 0;
}

void fs_terminal_leave(void) {
    if (!session.active) return;
    session.active = 0;
    give_back();
    replay_stderr();
    for (size_t i = 0; i < sizeof ending / sizeof *ending; i++) sigaction(ending[i], &previous[ending[i]], NULL);
    for (size_t i = 0; i < sizeof crashing / sizeof *crashing; i++)
        sigaction(crashing[i], &previous[crashing[i]], NULL);
    sigaction(SIGTSTP, &previous[SIGTSTP], NULL);
    sigaction(SIGWINCH, &previous[SIGWINCH], NULL);
}

void fs_terminal_suspend(void) {
    if (!session.active) return;
    session.active = 0;
    give_back();
    replay_stderr();
}

void fs_terminal_resume(void) {
    if (session.active || session.fd < 0) return;
    if (session.held_stderr >= 0) dup2(session.stderr_file, STDERR_FILENO);
    take();
    session.active = 1;
}
