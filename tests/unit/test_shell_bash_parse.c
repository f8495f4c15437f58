/* test_shell_bash_parse.c — bash_parse: which simple commands a command line
 * runs, with quoting, operators, nesting, substitutions, redirections,
 * wrappers, and the cases it must call uncertain. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell/bash_parse.h"

/* The parse as one line per command: "text|flags" joined by "\n", for
 * compact expectations. Only the text when with_flags is false. */
static char *dump(const bash_cmds *c)
{
    size_t cap = 4096, len = 0;
    char *out = calloc(1, cap);
    for (size_t i = 0; i < bash_cmds_count(c); i++) {
        char *t = bash_cmd_text(bash_cmds_at(c, i));
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "\n" : "", t);
        free(t);
    }
    return out;
}

static void expect(const char *cmd, const char *want, bool uncertain)
{
    bash_cmds *c = bash_parse(cmd);
    char *got = dump(c);
    if (strcmp(got, want) || bash_cmds_uncertain(c) != uncertain) {
        fprintf(stderr, "command:   %s\nwant:\n%s\n(uncertain %d)\ngot:\n%s\n(uncertain %d: %s)\n",
                cmd, want, uncertain, got, bash_cmds_uncertain(c),
                bash_cmds_why(c) ? bash_cmds_why(c) : "");
        fail();
    }
    free(got);
    bash_cmds_free(c);
}

static const bash_cmd *only(bash_cmds *c, size_t i)
{
    assert_true(i < bash_cmds_count(c));
    return bash_cmds_at(c, i);
}

static void test_quoting(void **state)
{
    bash_cmds *c = bash_parse("echo \"a b\" 'c d' $'e\\tf' g\\ h \"x\\\"y\" 'it'\\''s' \"$HOME/x\"");
    const bash_cmd *m = only(c, 0);
    assert_int_equal(m->argc, 8);
    assert_string_equal(m->argv[1], "a b");
    assert_string_equal(m->argv[2], "c d");
    assert_string_equal(m->argv[3], "e\tf");
    assert_string_equal(m->argv[4], "g h");
    assert_string_equal(m->argv[5], "x\"y");
    assert_string_equal(m->argv[6], "it's");
    assert_string_equal(m->argv[7], "$HOME/x");
    assert_true(m->argv_flags[7] & BASH_WORD_EXPANDS);
    assert_true(m->argv_flags[1] & BASH_WORD_QUOTED);
    assert_false(m->argv_flags[0] & BASH_WORD_QUOTED);
    assert_null(m->argv[8]);
    assert_false(bash_cmds_uncertain(c));
    bash_cmds_free(c);

    /* Quote removal makes \rm and 'r''m' plain rm. */
    expect("\\rm -rf x; 'r''m' y; r\"m\" z", "rm -rf x\nrm y\nrm z", false);
    /* Single quotes keep everything, including $ and backslashes. */
    c = bash_parse("echo '$(rm -rf /)' '\\n'");
    assert_int_equal(bash_cmds_count(c), 1);
    assert_string_equal(only(c, 0)->argv[1], "$(rm -rf /)");
    assert_string_equal(only(c, 0)->argv[2], "\\n");
    bash_cmds_free(c);
    /* Line continuations disappear. */
    expect("git \\\nstatus", "git status", false);
    /* $'…' escapes: hex, octal, unicode. */
    c = bash_parse("printf $'\\x41\\101\\u00e9'");
    assert_string_equal(only(c, 0)->argv[1], "AA\xc3\xa9");
    bash_cmds_free(c);
    /* ~ and globs are flagged, not expanded. */
    c = bash_parse("ls ~/x *.c [ab] '*.h' [");
    m = only(c, 0);
    assert_true(m->argv_flags[1] & BASH_WORD_TILDE);
    assert_true(m->argv_flags[2] & BASH_WORD_GLOB);
    assert_true(m->argv_flags[3] & BASH_WORD_GLOB);
    assert_false(m->argv_flags[4] & BASH_WORD_GLOB);
    assert_false(m->argv_flags[5] & BASH_WORD_GLOB);
    bash_cmds_free(c);
}

static void test_operators(void **state)
{
    expect("git status && rm -rf /tmp/x", "git status\nrm -rf /tmp/x", false);
    expect("a || b; c & d\ne", "a\nb\nc\nd\ne", false);
    expect("a;b&&c||d", "a\nb\nc\nd", false);
    bash_cmds *c = bash_parse("ls | grep x |& wc -l");
    assert_int_equal(bash_cmds_count(c), 3);
    assert_int_equal(only(c, 0)->flags & (BASH_CMD_PIPE_IN | BASH_CMD_PIPE_OUT), BASH_CMD_PIPE_OUT);
    assert_int_equal(only(c, 1)->flags & (BASH_CMD_PIPE_IN | BASH_CMD_PIPE_OUT),
                     BASH_CMD_PIPE_IN | BASH_CMD_PIPE_OUT);
    assert_int_equal(only(c, 2)->flags & (BASH_CMD_PIPE_IN | BASH_CMD_PIPE_OUT), BASH_CMD_PIPE_IN);
    assert_int_equal(only(c, 0)->pipeline, only(c, 2)->pipeline);
    assert_int_equal(only(c, 2)->pipe_pos, 2);
    bash_cmds_free(c);
    c = bash_parse("sleep 1 & echo hi");
    assert_true(only(c, 0)->flags & BASH_CMD_BACKGROUND);
    assert_false(only(c, 1)->flags & BASH_CMD_BACKGROUND);
    bash_cmds_free(c);
    /* Comments end at the newline; # inside a word is not one. */
    expect("echo a#b # rm -rf /\nls", "echo 'a#b'\nls", false);
    /* An operator with nothing after it is a syntax error: uncertain. */
    expect("ls &&", "ls", true);
    expect("ls |", "ls", true);
    expect("&& ls", "ls", true);
    expect("", "", false);
    expect("   # only a comment", "", false);
}

static void test_nesting(void **state)
{
    expect("(cd a && make) && { echo x; echo y; }", "cd a\nmake\necho x\necho y", false);
    expect("if [ -f x ]; then rm x; elif true; then :; else echo no; fi",
           "'[' -f x ']'\nrm x\ntrue\n:\necho no", false);
    expect("for f in *.c $(ls); do gcc -c \"$f\"; done", "ls\ngcc -c '$f'", false);
    expect("while read l; do echo \"$l\"; done < in.txt", "read l\necho '$l'\n", false);
    expect("until false; do break; done", "false\nbreak", false);
    expect("case \"$x\" in a|b) echo ab;; (c) rm c;; *) ;; esac", "echo ab\nrm c", false);
    expect("case $x in\n  a) echo a\n  ;;\n  *) echo b\nesac", "echo a\necho b", false);
    expect("[[ -f x && $(id -u) > 0 ]] && echo ok", "id -u\necho ok", false);
    expect("(( i++ )); for ((i=0;i<3;i++)); do echo $i; done", "echo '$i'", false);
    expect("! grep -q x f && time -p make", "grep -q x f\nmake", false);
    /* Function bodies count: they run when called. */
    bash_cmds *c = bash_parse("f() { rm -rf \"$1\"; }; f /; function g { ls; }");
    assert_int_equal(bash_cmds_count(c), 3);
    assert_string_equal(only(c, 0)->function, "f");
    assert_true(only(c, 0)->flags & BASH_CMD_FUNCTION);
    assert_null(only(c, 1)->function);
    assert_string_equal(only(c, 2)->function, "g");
    bash_cmds_free(c);
    /* depth tells nesting. */
    c = bash_parse("a; (b; (c))");
    assert_int_equal(only(c, 0)->depth, 0);
    assert_int_equal(only(c, 1)->depth, 1);
    assert_int_equal(only(c, 2)->depth, 2);
    bash_cmds_free(c);
    /* Keywords only count at the start of a command. */
    expect("echo if then fi done", "echo if then fi done", false);
}

static void test_substitutions(void **state)
{
    bash_cmds *c = bash_parse("echo $(date) `whoami` \"$(id -u)\" ${X:-$(rm -rf /)}");
    assert_int_equal(bash_cmds_count(c), 5);
    assert_string_equal(only(c, 0)->argv[0], "date");
    assert_true(only(c, 0)->flags & BASH_CMD_SUBST);
    assert_string_equal(only(c, 1)->argv[0], "whoami");
    assert_string_equal(only(c, 2)->argv[0], "id");
    assert_string_equal(only(c, 3)->argv[0], "rm");
    assert_string_equal(only(c, 4)->argv[0], "echo");
    assert_false(only(c, 4)->flags & BASH_CMD_SUBST);
    assert_string_equal(only(c, 4)->argv[1], "$(date)");
    assert_false(bash_cmds_uncertain(c));
    bash_cmds_free(c);
    /* Nested substitutions, a ) inside quotes or a case pattern. */
    expect("echo $(echo $(echo ')') \"$(ls \")\")\")",
           "echo ')'\nls ')'\necho '$(echo '\\'')'\\'')' '$(ls \")\")'\n"
           "echo '$(echo $(echo '\\'')'\\'') \"$(ls \")\")\")'", false);
    expect("x=$(case a in a) echo y;; esac)", "echo y\nx='$(case a in a) echo y;; esac)'", false);
    /* Backticks with escaped inner backticks. */
    expect("echo `echo \\`date\\``", "date\necho '`date`'\necho '`echo \\`date\\``'", false);
    /* Arithmetic is not a command. */
    expect("echo $((1 + 2)) $(( (3) ))", "echo '$((1 + 2))' '$(( (3) ))'", false);
    /* Process substitution runs commands but is marked uncertain. */
    expect("diff <(ls a) <(ls b)", "ls a\nls b\ndiff '<(ls a)' '<(ls b)'", true);
}

static void test_assignments_and_redirects(void **state)
{
    bash_cmds *c = bash_parse("FOO=1 BAR=\"x y\" make test >> log 2>&1 < in &> all >| clob");
    const bash_cmd *m = only(c, 0);
    assert_int_equal(m->nassign, 2);
    assert_string_equal(m->assign[0], "FOO=1");
    assert_string_equal(m->assign[1], "BAR=x y");
    assert_int_equal(m->argc, 2);
    assert_string_equal(m->argv[0], "make");
    assert_int_equal(m->nredir, 5);
    assert_int_equal(m->redir[0].kind, BASH_REDIR_APPEND);
    assert_string_equal(m->redir[0].target, "log");
    assert_true(bash_redir_writes(&m->redir[0]));
    assert_int_equal(m->redir[1].kind, BASH_REDIR_DUP);
    assert_int_equal(m->redir[1].fd, 2);
    assert_string_equal(m->redir[1].target, "1");
    assert_false(bash_redir_writes(&m->redir[1]));
    assert_int_equal(m->redir[2].kind, BASH_REDIR_IN);
    assert_true(bash_redir_reads(&m->redir[2]));
    assert_int_equal(m->redir[3].kind, BASH_REDIR_OUT_ALL);
    assert_int_equal(m->redir[4].kind, BASH_REDIR_OUT);
    assert_string_equal(m->redir[4].target, "clob");
    bash_cmds_free(c);

    /* Redirections anywhere in the command, with and without spaces. */
    c = bash_parse("echo x>/etc/passwd y >&2; >out; cmd >& both; exec 3<>rw");
    m = only(c, 0);
    assert_int_equal(m->argc, 3);
    assert_string_equal(m->redir[0].target, "/etc/passwd");
    assert_int_equal(m->redir[1].kind, BASH_REDIR_DUP);
    assert_int_equal(only(c, 1)->argc, 0);
    assert_string_equal(only(c, 1)->redir[0].target, "out");
    assert_int_equal(only(c, 2)->redir[0].kind, BASH_REDIR_OUT_ALL);
    assert_string_equal(only(c, 2)->redir[0].target, "both");
    assert_int_equal(only(c, 3)->redir[0].kind, BASH_REDIR_INOUT);
    assert_int_equal(only(c, 3)->redir[0].fd, 3);
    bash_cmds_free(c);

    /* A compound command's redirections are kept as an empty command. */
    c = bash_parse("{ echo a; echo b; } > out.txt");
    assert_int_equal(bash_cmds_count(c), 3);
    assert_int_equal(only(c, 2)->argc, 0);
    assert_string_equal(only(c, 2)->redir[0].target, "out.txt");
    bash_cmds_free(c);

    /* "FOO=1" in argument position is an argument; quoted = is no assignment. */
    expect("env FOO=1 ls; \"X=1\" cmd", "env FOO=1 ls\nFOO=1 ls\n'X=1' cmd", false);
    expect("arr=(1 \"2 3\"); echo ${arr[@]}", "arr='(1 \"2 3\")'\necho '${arr[@]}'", false);
    /* Target with an expansion is flagged. */
    c = bash_parse("echo x > \"$LOG\"");
    assert_true(only(c, 0)->redir[0].target_flags & BASH_WORD_EXPANDS);
    bash_cmds_free(c);
}

static void test_heredocs(void **state)
{
    bash_cmds *c = bash_parse("cat <<EOF > f.txt\nhello $x\nrm -rf /\nEOF\necho done");
    assert_int_equal(bash_cmds_count(c), 2);
    assert_int_equal(only(c, 0)->redir[0].kind, BASH_REDIR_HEREDOC);
    assert_string_equal(only(c, 0)->redir[0].target, "EOF");
    assert_string_equal(only(c, 0)->redir[1].target, "f.txt");
    assert_string_equal(only(c, 1)->argv[0], "echo");
    assert_false(bash_cmds_uncertain(c));
    bash_cmds_free(c);
    expect("cat <<'EOF' | grep x\n$(rm -rf /)\nEOF\nls", "cat\ngrep x\nls", false);
    expect("cat <<-EOF\n\tbody\n\tEOF\nls", "cat\nls", false);
    expect("cat <<A <<B\na\nA\nb\nB\nls", "cat\nls", false);
    /* Cannot be followed: substitution in an expanding body, no end. */
    expect("cat <<EOF\n$(rm x)\nEOF", "cat", true);
    expect("cat <<EOF\nno end", "cat", true);
    expect("cat <<EOF", "cat", true);
    /* Here-strings are words. */
    c = bash_parse("grep x <<< \"$(ls)\"");
    assert_int_equal(bash_cmds_count(c), 2);
    assert_int_equal(only(c, 1)->redir[0].kind, BASH_REDIR_HERESTRING);
    bash_cmds_free(c);
}

static void test_wrappers(void **state)
{
    bash_cmds *c = bash_parse("sudo -u root timeout -s KILL 5 nice -n 3 rm -rf /");
    assert_int_equal(bash_cmds_count(c), 4);
    assert_string_equal(only(c, 1)->argv[0], "timeout");
    assert_int_equal(only(c, 1)->parent, 0);
    assert_false(only(c, 1)->flags & BASH_CMD_TRANSPARENT);
    assert_string_equal(only(c, 2)->argv[0], "nice");
    assert_true(only(c, 2)->flags & BASH_CMD_TRANSPARENT);
    assert_string_equal(only(c, 3)->argv[0], "rm");
    assert_int_equal(only(c, 3)->parent, 2);
    assert_true(only(c, 3)->flags & BASH_CMD_DERIVED);
    bash_cmds_free(c);

    expect("env -i PATH=/x FOO=1 make", "env -i PATH=/x FOO=1 make\nPATH=/x FOO=1 make", false);
    expect("nohup ./server &", "nohup ./server\n./server", false);
    expect("command -v git", "command -v git", false);
    expect("ls | xargs -0 -n 1 rm -f", "ls\nxargs -0 -n 1 rm -f\nrm -f", false);
    expect("find . -name '*.o' -exec rm -f {} \\; -o -execdir chmod 644 {} +",
           "find . -name '*.o' -exec rm -f '{}' ';' -o -execdir chmod 644 '{}' +\n"
           "rm -f '{}'\nchmod 644 '{}'", false);
    expect("find . -exec rm {}", "find . -exec rm '{}'", true);
    expect("bash -c 'git status; rm x' && sh -lc \"ls\"",
           "bash -c 'git status; rm x'\ngit status\nrm x\nsh -lc ls\nls", false);
    c = bash_parse("bash -c 'rm x'");
    assert_int_equal(only(c, 1)->parent, 0);
    assert_true(only(c, 1)->flags & BASH_CMD_DERIVED);
    bash_cmds_free(c);
    expect("bash script.sh", "bash script.sh", false);
    /* Built at run time, or eval: uncertain (but still listed). */
    expect("sh -c \"$CMD\"", "sh -c '$CMD'\n'$CMD'", true);
    expect("eval \"rm -rf /\"", "eval 'rm -rf /'\nrm -rf /", true);
    expect("su -c 'rm x' root", "su -c 'rm x' root\nrm x", false);
    expect("watch -n 1 'ls | wc -l'", "watch -n 1 'ls | wc -l'\nls\nwc -l", false);
    expect("sudo --frobnicate ls", "sudo --frobnicate ls\nls", false);
    expect("sudo -Z ls", "sudo -Z ls", true);
    expect("$CMD arg", "'$CMD' arg", true);
    expect("/bin/r* -rf /", "'/bin/r*' -rf /", true);
}

static void test_fork_bomb_shape(void **state)
{
    bash_cmds *c = bash_parse(":(){ :|:& };:");
    assert_int_equal(bash_cmds_count(c), 3);
    assert_string_equal(only(c, 0)->function, ":");
    assert_true(only(c, 0)->flags & BASH_CMD_PIPE_OUT);
    assert_true(only(c, 1)->flags & BASH_CMD_BACKGROUND);
    assert_null(only(c, 2)->function);
    assert_false(bash_cmds_uncertain(c));
    bash_cmds_free(c);
}

static void test_uncertain(void **state)
{
    const char *bad[] = {
        "echo \"unterminated", "echo 'unterminated", "echo $(ls", "(ls", "{ ls;", "echo `ls",
        "if true; then ls", "while x; do y", "case a in a) ls", "ls )", "echo ${x", "fi",
        "done", "f() ls", "[[ -f x", "echo $'abc", "ls ;; ls", "a=(1 2", "cat > ",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        bash_cmds *c = bash_parse(bad[k]);
        if (!bash_cmds_uncertain(c)) {
            fprintf(stderr, "not uncertain: %s\n", bad[k]);
            fail();
        }
        assert_non_null(bash_cmds_why(c));
        bash_cmds_free(c);
    }
    /* NUL ends the text; NULL is uncertain. */
    bash_cmds *c = bash_parse_n("ls\0rm -rf /", 11);
    assert_int_equal(bash_cmds_count(c), 1);
    assert_true(bash_cmds_uncertain(c));
    bash_cmds_free(c);
    c = bash_parse(NULL);
    assert_true(bash_cmds_uncertain(c));
    assert_int_equal(bash_cmds_count(c), 0);
    bash_cmds_free(c);
    /* A certain parse has no reason. */
    c = bash_parse("ls -la");
    assert_null(bash_cmds_why(c));
    bash_cmds_free(c);
}

static void test_limits(void **state)
{
    /* Deep nesting stops at the limit, uncertain, without blowing the stack. */
    size_t n = 5000;
    char *s = malloc(n * 4 + 16);
    size_t len = 0;
    for (size_t k = 0; k < n; k++)
        len += (size_t)sprintf(s + len, "$(");
    len += (size_t)sprintf(s + len, "ls");
    for (size_t k = 0; k < n; k++)
        s[len++] = ')';
    s[len] = '\0';
    bash_cmds *c = bash_parse(s);
    assert_true(bash_cmds_uncertain(c));
    bash_cmds_free(c);
    /* Nested quotes inside ${ } recurse too. */
    len = 0;
    for (size_t k = 0; k < n; k++)
        len += (size_t)sprintf(s + len, "\"${");
    s[len] = '\0';
    c = bash_parse(s);
    assert_true(bash_cmds_uncertain(c));
    bash_cmds_free(c);
    free(s);
    /* Too many commands: parsing stops, uncertain. */
    s = malloc(BASH_PARSE_MAX_CMDS * 3 + 10);
    len = 0;
    for (size_t k = 0; k < BASH_PARSE_MAX_CMDS + 5; k++)
        len += (size_t)sprintf(s + len, "a;");
    c = bash_parse(s);
    assert_true(bash_cmds_uncertain(c));
    assert_int_equal(bash_cmds_count(c), BASH_PARSE_MAX_CMDS);
    bash_cmds_free(c);
    free(s);
    /* Wrapper chains stop unwrapping. */
    c = bash_parse("nice nice nice nice nice nice nice nice nice nice nice ls");
    assert_true(bash_cmds_uncertain(c));
    bash_cmds_free(c);
}

static void test_text_and_name(void **state)
{
    bash_cmds *c = bash_parse("A='x y' /usr/bin/git commit -m \"it's\" ''");
    char *t = bash_cmd_text(only(c, 0));
    assert_string_equal(t, "A='x y' /usr/bin/git commit -m 'it'\\''s' ''");
    free(t);
    assert_string_equal(bash_cmd_name(only(c, 0)), "git");
    bash_cmds_free(c);
}

/* Issue #10 class 3: wrappers the parser follows now, script strings it
 * parses, and words a wrapper fills in at run time. */
static void test_more_wrappers(void **state)
{
    expect("taskset -c 0 git push", "taskset -c 0 git push\ngit push", false);
    expect("taskset 0x3 git push", "taskset 0x3 git push\ngit push", false);
    expect("taskset -p 0x3 123", "taskset -p 0x3 123", false);
    expect("chrt -f 10 git push", "chrt -f 10 git push\ngit push", false);
    expect("flock /tmp/l git push", "flock /tmp/l git push\ngit push", false);
    expect("flock -x /tmp/l -c 'git push'", "flock -x /tmp/l -c 'git push'\ngit push", false);
    expect("unshare -rn git push", "unshare -rn git push\ngit push", false);
    expect("strace -f -o /dev/null git push", "strace -f -o /dev/null git push\ngit push", false);
    expect("script -qc 'git push' /dev/null", "script -qc 'git push' /dev/null\ngit push", false);
    expect("script -q log.txt", "script -q log.txt", false);
    expect("runuser -u me -- git push", "runuser -u me -- git push\ngit push", false);
    expect("runuser -l me -c 'git push'", "runuser -l me -c 'git push'\ngit push", false);
    expect("sg wheel 'git push'", "sg wheel 'git push'\n'git push'", false);
    expect("chroot /srv git push", "chroot /srv git push\ngit push", false);
    expect("busybox sh -c 'git push'", "busybox sh -c 'git push'\nsh -c 'git push'\ngit push",
           false);
    expect("cpulimit -l 50 git push", "cpulimit -l 50 git push\ngit push", false);
    expect("firejail --net=none git push", "firejail --net=none git push\ngit push", false);
    expect("nsenter -t 1 -m git push", "nsenter -t 1 -m git push\ngit push", false);
    expect("strace -% git push", "strace -% git push", true);   /* unknown option */
    expect("trap 'git push' EXIT", "trap 'git push' EXIT\ngit push", false);
    expect("trap -- 'rm x; git push' INT TERM",
           "trap -- 'rm x; git push' INT TERM\nrm x\ngit push", false);
    expect("trap - EXIT", "trap - EXIT", false);
    expect("trap \"$C\" EXIT", "trap '$C' EXIT\n'$C'", true);
    expect("parallel ::: 'git push'", "parallel ::: 'git push'", true);
    expect("python3 -c 'import os; os.system(\"x\")'",
           "python3 -c 'import os; os.system(\"x\")'", true);
    expect("python3 -c 'print(1)'", "python3 -c 'print(1)'", false);

    /* xargs: appended words, or the -I placeholder as an expansion. */
    bash_cmds *c = bash_parse("xargs git");
    assert_true(only(c, 1)->flags & BASH_CMD_MORE_ARGS);
    bash_cmds_free(c);
    c = bash_parse("xargs -I{} git {} --short");
    assert_false(only(c, 1)->flags & BASH_CMD_MORE_ARGS);
    assert_true(only(c, 1)->argv_flags[1] & BASH_WORD_EXPANDS);
    assert_false(only(c, 1)->argv_flags[2] & BASH_WORD_EXPANDS);
    bash_cmds_free(c);
    c = bash_parse("xargs -I % sudo git %");
    assert_true(only(c, 2)->argv_flags[1] & BASH_WORD_EXPANDS);   /* through sudo too */
    bash_cmds_free(c);
    c = bash_parse("find . -exec git {} \\;");
    assert_true(only(c, 1)->argv_flags[1] & BASH_WORD_EXPANDS);
    bash_cmds_free(c);
    c = bash_parse("parallel git ::: push");
    char *t = bash_cmd_text(only(c, 1));
    assert_string_equal(t, "git");
    free(t);
    assert_true(only(c, 1)->flags & BASH_CMD_MORE_ARGS);
    bash_cmds_free(c);
}

/* Programs whose subcommands run a command (bash_runners.c): each family
 * reports what it runs, derived from it, or says uncertain. */
static void test_runner_subcommands(void **state)
{
    (void)state;
    /* at / batch: a here-string is the script; a pipe is not followed; -f
     * names a script file, as `bash FILE`. */
    expect("at now <<< \"rm -rf x\"", "at now\nrm -rf x", false);
    expect("batch -f job.sh", "batch -f job.sh", false);
    expect("echo x | at now", "echo x\nat now", true);
    /* tmux: window-making subcommands run shell text it does not follow. */
    expect("tmux new-window \"rm x\"", "tmux new-window 'rm x'", true);
    expect("tmux ls", "tmux ls", false);
    /* Package runners: words after the manager's options, or -c/--call
     * shell text. */
    expect("npm exec -c \"rm -rf x\"", "npm exec -c 'rm -rf x'\nrm -rf x", false);
    expect("npm --yes exec --package=y -- cowsay hi",
           "npm --yes exec --package=y -- cowsay hi\ncowsay hi", false);
    expect("pnpm dlx --call=\"rm y\"", "pnpm dlx '--call=rm y'\nrm y", false);
    expect("uv run --with req pytest -x", "uv run --with req pytest -x\npytest -x", false);
    /* git: past its global options. */
    expect("git -C repo submodule foreach --recursive rm -rf build",
           "git -C repo submodule foreach --recursive rm -rf build\nrm -rf build", false);
    expect("git config alias.wipe \"!rm -rf .\"", "git config alias.wipe '!rm -rf .'\nrm -rf .",
           false);
    expect("git config set alias.st status", "git config set alias.st status\ngit status", false);
    expect("git config core.pager \"less -R\"", "git config core.pager 'less -R'\nless -R", false);
    expect("git bisect run make test", "git bisect run make test\nmake test", false);
    expect("git rebase -x \"make test\" main", "git rebase -x 'make test' main\nmake test", false);
    expect("git rebase --exec=true main", "git rebase --exec=true main\ntrue", false);
    expect("git filter-branch --tree-filter=\"rm -f secret\" HEAD",
           "git filter-branch '--tree-filter=rm -f secret' HEAD\nrm -f secret", false);
    expect("git difftool --extcmd \"meld\" HEAD", "git difftool --extcmd meld HEAD\nmeld", false);
    expect("git status", "git status", false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quoting),
        cmocka_unit_test(test_operators),
        cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_substitutions),
        cmocka_unit_test(test_assignments_and_redirects),
        cmocka_unit_test(test_heredocs),
        cmocka_unit_test(test_wrappers),
        cmocka_unit_test(test_fork_bomb_shape),
        cmocka_unit_test(test_uncertain),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_text_and_name),
        cmocka_unit_test(test_more_wrappers),
        cmocka_unit_test(test_runner_subcommands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
