"""Programs a Shell may run that start other programs: `allow=("find", "git")` lets a
model run find and git, and not, through their options, a shell or a program it was not
given (`find -exec sh`, `git -c alias.x=!sh`, `tar --to-command`).

Real subprocesses and a real git repository: a refused command is shown not to run by
the file its payload would have made, and by the store, which records nothing. The
sandbox is off here, so that the allow-list is known to hold on its own (the sandbox is
tested on its own, with no allow-list, in test_shell_sandbox.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import addressable as ad
from addressable.adapters import Shell


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit."""
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, env=env, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "a@example.com")
    git("config", "user.name", "A")
    (tmp_path / "notes.txt").write_text("one\n")
    git("add", "notes.txt")
    git("commit", "-q", "-m", "first")
    return tmp_path


# Each runs `touch pwned` (or a shell that would) if its option is followed.
ESCAPES = [
    pytest.param("find . -maxdepth 0 -exec touch pwned ;", id="find -exec"),
    pytest.param("find . -maxdepth 0 -execdir sh -c 'touch pwned' ;", id="find -execdir sh"),
    pytest.param("find . -maxdepth 0 -ok touch pwned ;", id="find -ok"),
    pytest.param("git -c alias.x='!touch pwned' x", id="git -c alias"),
    pytest.param("git -c core.pager='touch pwned' -p log", id="git -c core.pager"),
    pytest.param("git --config-env=core.pager=PAGER log", id="git --config-env"),
    pytest.param("git config alias.x '!touch pwned'", id="git config writes an alias"),
    pytest.param("git config core.fsmonitor 'touch pwned'", id="git config core.fsmonitor"),
    pytest.param("git rebase -x 'touch pwned' HEAD", id="git rebase -x"),
    pytest.param("git rebase --exe='touch pwned' HEAD", id="git rebase --exec abbreviated"),
    pytest.param("git bisect run touch pwned", id="git bisect run"),
    pytest.param("git bisect view bisect run touch pwned", id="git bisect view runs git"),
    pytest.param("git bisect visualize submodule foreach touch pwned", id="bisect visualize"),
    pytest.param("git submodule foreach touch pwned", id="git submodule foreach"),
    pytest.param("git fetch --upload-pack='touch pwned' .", id="git fetch --upload-pack"),
    pytest.param("git clone -u 'touch pwned' . copy", id="git clone -u"),
    pytest.param("git clone -c core.fsmonitor='touch pwned' . copy", id="git clone -c"),
    pytest.param("git grep -O'touch pwned' one", id="git grep -O"),
    pytest.param("git --exec-path=. version", id="git --exec-path="),
    pytest.param("tar -cf a.tar --to-command='touch pwned' notes.txt", id="tar --to-command"),
    pytest.param("tar -cf a.tar --to-com='touch pwned' notes.txt", id="tar --to-command abbr"),
    pytest.param("tar -c -f a.tar -I 'touch pwned' notes.txt", id="tar -I"),
    pytest.param("tar -cvItouch -f a.tar notes.txt", id="tar -I in a cluster"),
    pytest.param("tar cIf touch a.tar notes.txt", id="tar -I old style"),
    pytest.param(
        "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='touch pwned' notes.txt",
        id="tar --checkpoint-action",
    ),
    # find ends -exec at "+" only right after "{}": this "+" is a word of git's command.
    pytest.param(
        "find . -maxdepth 0 -exec git --namespace + -c 'alias.x=!touch pwned' x ;",
        id="find -exec + not after {}",
    ),
    # tar runs the value of -I through /bin/sh -c when it compresses.
    pytest.param("tar -c -f a.tar -I 'find . -quit ;touch pwned;' notes.txt", id="tar -I sh"),
    pytest.param(
        "tar -cf a.tar --use-compress-program='git --version >/dev/null; touch pwned;' notes.txt",
        id="tar --use-compress-program sh",
    ),
    # git config reads options only up to its first name: these set alias.x.
    pytest.param("git config alias.x '!touch pwned' --list", id="git config NAME VALUE --list"),
    pytest.param(
        "git config --file .git/config alias.x '!touch pwned' --get",
        id="git config --file F NAME VALUE --get",
    ),
    # Global options: one git takes with a value, and one the adapter does not know.
    pytest.param("git --attr-source HEAD config alias.x '!touch pwned'", id="git --attr-source"),
    pytest.param("git --shallow-file x rebase -x 'touch pwned' HEAD", id="git --shallow-file"),
    # Commands whose words are a program (merge-index) or git's own command line, run in
    # each repository a setting names (for-each-repo), as git -C REPO WORDS.
    pytest.param("git merge-index touch -a", id="git merge-index"),
    pytest.param(
        "git for-each-repo --config=core.bare -- -c alias.x='!touch pwned' x",
        id="git for-each-repo",
    ),
    # `-fprintf` takes two values for find alone: to tar and git it is -f with "printf".
    pytest.param("tar -fprintf -I 'touch pwned' notes.txt", id="tar -fprintf -I"),
    pytest.param("git grep -fprintf -O'touch pwned' one", id="git grep -fprintf -O"),
    # find puts the path it found where {} is within a word: a starting point named
    # "=touch pwned" spliced into an option its program refuses as written.
    pytest.param(
        "find '=touch pwned' -exec tar -xf a.tar --to-command{} ;", id="find {} in an option"
    ),
    pytest.param(
        "find '=touch pwned' -exec git grep --no-index --open-files-in-pager{} x ;",
        id="find {} in git's option",
    ),
    pytest.param("find notes.txt -exec {} x ;", id="find {} as the program"),
    pytest.param("find notes.txt -exec ./{} ;", id="find {} within the program"),
]


@pytest.mark.parametrize("command", ESCAPES)
def test_an_option_that_starts_a_program_not_allowed_is_refused_and_nothing_runs(
    disk_kit: ad.Toolkit, repo: Path, command: str
) -> None:
    shell = Shell(disk_kit, sandbox=False, cwd=repo, allow=("find", "git", "tar"))
    with pytest.raises(ad.ScopeError) as caught:
        shell(command)
    assert "\n" not in str(caught.value) and "nothing was run" in str(caught.value)
    assert not (repo / "pwned").exists()
    assert not (repo / "a.tar").exists() and not (repo / "copy").exists()
    assert list(disk_kit.store.records()) == []


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("find . -maxdepth 0 -exec sh -c 'touch pwned' ;", id="find -exec sh"),
        pytest.param("git -c alias.x='!touch pwned' x", id="git -c alias"),
        pytest.param("tar -cf a.tar --to-command='touch pwned' notes.txt", id="tar shell"),
        pytest.param("find /bin/sh -exec {} -c 'touch pwned' ;", id="find {} as the program"),
    ],
)
def test_without_allow_an_option_cannot_start_a_shell_either(
    disk_kit: ad.Toolkit, repo: Path, command: str
) -> None:
    shell = Shell(disk_kit, sandbox=False, cwd=repo)
    with pytest.raises(ad.ScopeError):
        shell(command)
    assert not (repo / "pwned").exists()


@pytest.mark.parametrize(
    ("command", "allow"),
    [
        pytest.param("rg --pre ./unpack secret", ("rg",), id="rg --pre"),
        pytest.param("rg --pre=./unpack secret", ("rg",), id="rg --pre="),
        pytest.param("fd -x touch pwned", ("fd",), id="fd -x"),
        pytest.param("fd . --exec-batch touch pwned", ("fd",), id="fd --exec-batch"),
        pytest.param("sort --compress-program=./zip big.txt", ("sort",), id="sort"),
        pytest.param("rsync -avze ./relay src/ host:dest/", ("rsync",), id="rsync -e"),
        pytest.param("rsync -fprintf -e ./relay src/ host:dest/", ("rsync",), id="rsync -f -e"),
        pytest.param("zip -T -TT ./check a.zip notes.txt", ("zip",), id="zip -TT"),
        pytest.param("go test -exec=./runner ./...", ("go",), id="go test -exec"),
        pytest.param("go vet --vettool ./tool ./...", ("go",), id="go vet -vettool"),
        pytest.param("find . -exec git -c core.pager=x log ;", ("find", "git"), id="nested"),
        # fd ends -x at ";" only, "+" included.
        pytest.param(
            "fd . -x git --namespace + -c 'alias.x=!touch pwned' x",
            ("fd", "git"),
            id="fd -x +",
        ),
        # wget asks a program for a password; a wgetrc line or file can name one.
        pytest.param("wget --use-askpass=./ask http://127.0.0.1:1/", ("wget",), id="wget askpass"),
        pytest.param("wget -qe use_askpass=./ask http://127.0.0.1:1/", ("wget",), id="wget -e"),
        pytest.param("wget --execute=x http://127.0.0.1:1/", ("wget",), id="wget --execute"),
        pytest.param("wget --config=./rc http://127.0.0.1:1/", ("wget",), id="wget --config"),
        # ssh settings that run a local command line, read more settings or load code.
        pytest.param("ssh -o 'ProxyCommand=touch pwned' host", ("ssh",), id="ssh ProxyCommand"),
        pytest.param("ssh -oproxycommand=x host", ("ssh",), id="ssh -o in its word"),
        pytest.param("ssh -vo 'LocalCommand touch pwned' host", ("ssh",), id="ssh in a cluster"),
        pytest.param("ssh -X -o KnownHostsCommand=x host", ("ssh",), id="ssh flag before -o"),
        pytest.param("ssh -o 'Match exec \"touch pwned\"' host", ("ssh",), id="ssh Match"),
        pytest.param("ssh -F ./config host", ("ssh",), id="ssh -F"),
        pytest.param("ssh -I ./pkcs11.so host", ("ssh",), id="ssh -I"),
        pytest.param("ssh host -o ProxyCommand=x", ("ssh",), id="ssh -o after the host"),
        pytest.param("ssh -o '\"ProxyCommand\" touch p' host", ("ssh",), id="ssh quoted name"),
        pytest.param("ssh -o '=ProxyCommand touch p' host", ("ssh",), id="ssh leading ="),
        pytest.param("ssh -o 'ProxyCommand\"\" touch p' host", ("ssh",), id="ssh empty quotes"),
        pytest.param("ssh -J 'u@a`touch${IFS}p`' host", ("ssh",), id="ssh -J a shell word"),
        pytest.param("ssh -o 'ProxyJump=u@a$(touch p)' host", ("ssh",), id="ssh ProxyJump"),
        pytest.param("scp -J 'a;touch p' x host:y", ("scp",), id="scp -J"),
        pytest.param("slogin -o ProxyCommand=x host", ("slogin",), id="slogin"),
        # ssh skips white space before a setting's name, a newline or a return too
        pytest.param("ssh -o '\nProxyCommand=touch p' host", ("ssh",), id="ssh leading newline"),
        pytest.param("scp -o '\rProxyCommand=touch p' a x:b", ("scp",), id="scp leading return"),
        pytest.param("ssh -o 'User=a\nProxyCommand=x' host", ("ssh",), id="ssh newline within"),
        # another name of PKCS11Provider: loads a library of code
        pytest.param("ssh -o SmartcardDevice=/tmp/x.so host", ("ssh",), id="ssh SmartcardDevice"),
        pytest.param("scp -S ./relay a host:b", ("scp",), id="scp -S"),
        pytest.param("scp -o ProxyCommand=x a host:b", ("scp",), id="scp -o"),
        pytest.param("sftp -b ./batch host", ("sftp",), id="sftp -b"),
        pytest.param("sftp -D ./server host", ("sftp",), id="sftp -D"),
        # Command lines split by rsync and go themselves: plain words only.
        pytest.param(
            "rsync -e 'ssh -p 22;touch pwned' src/ host:dest/", ("rsync", "ssh"), id="rsync -e ;"
        ),
        pytest.param(
            "go test -toolexec 'git --version;sh' ./...", ("go", "git"), id="go -toolexec ;"
        ),
    ],
)
def test_programs_that_need_not_be_installed_are_refused_by_their_options(
    disk_kit: ad.Toolkit, tmp_path: Path, command: str, allow: tuple[str, ...]
) -> None:
    shell = Shell(disk_kit, sandbox=False, cwd=tmp_path, allow=allow)
    with pytest.raises(ad.ScopeError, match="nothing was run"):
        shell(command)


@pytest.mark.parametrize(
    ("command", "allow"),
    [
        # install -s runs the strip program on the file it installs: here, a script.
        pytest.param("install -s --strip-program=sh run.sh out", ("install",), id="install"),
        pytest.param("install --strip=sh -s run.sh out", ("install",), id="install abbr."),
        # split pipes each piece to a command line through $SHELL -c.
        pytest.param("split --filter='touch pwned' notes.txt", ("split",), id="split"),
        pytest.param("split --filter=sh run.sh", None, id="split sh, no allow="),
        pytest.param("split --fi='sh -c id' notes.txt", None, id="split abbr."),
        pytest.param("diff3 --diff-program=touch pwned a b", ("diff3",), id="diff3"),
        pytest.param("sdiff --diff-program=./run.sh a b", ("sdiff",), id="sdiff"),
        pytest.param("man -P 'sh run.sh' ls", ("man",), id="man -P"),
        pytest.param("man -Hsh ls", ("man",), id="man -H"),
        pytest.param("man -C ./man.conf ls", ("man",), id="man -C"),
    ],
)
def test_more_options_that_start_a_program_are_checked(
    disk_kit: ad.Toolkit, tmp_path: Path, command: str, allow: tuple[str, ...] | None
) -> None:
    (tmp_path / "notes.txt").write_text("one\n")
    script = tmp_path / "run.sh"
    script.write_text("touch pwned\n")
    script.chmod(0o755)
    shell = Shell(disk_kit, sandbox=False, cwd=tmp_path, allow=allow)
    with pytest.raises(ad.ScopeError, match="nothing was run"):
        shell(command)
    assert not (tmp_path / "pwned").exists()
    assert list(disk_kit.store.records()) == []


def test_more_options_may_start_a_program_that_is_allowed(
    disk_kit: ad.Toolkit, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    shell = Shell(disk_kit, sandbox=False, cwd=tmp_path, allow=("split", "install", "cat", "true"))
    assert shell("split -l 1 --filter=cat notes.txt").payload == b"one\ntwo\n[exit 0]"
    assert shell("install -s --strip-program=true notes.txt copy").payload == b"[exit 0]"
    assert (tmp_path / "copy").read_text() == "one\ntwo\n"


def test_an_option_may_start_a_program_that_is_allowed(disk_kit: ad.Toolkit, repo: Path) -> None:
    shell = Shell(disk_kit, sandbox=False, cwd=repo, allow=("find", "touch", "git", "tar", "gzip"))
    assert shell("find . -maxdepth 0 -exec touch made ;").payload.endswith(b"[exit 0]")
    assert (repo / "made").exists()
    assert shell("tar -c -f a.tgz -I gzip notes.txt").payload.endswith(b"[exit 0]")
    assert (repo / "a.tgz").exists()


@pytest.mark.parametrize(
    "command",
    [
        "git log --oneline",
        "git -C . status --short",
        "git --no-pager log -p",
        "git config --get user.name",
        "git config --list",
        "git grep -c one",
        "git commit -c HEAD --dry-run",
        "git clean -x -n",
        "git cherry -v",
        "tar -cf a.tar notes.txt",
        "tar cf b.tar notes.txt",
        "find . -name '*.txt' -newer notes.txt",
        "git --exec-path",
        "git config user.name",
        "git config -l",
        "git config --file .git/config --get-regexp user",
        "git config --type=bool --get core.bare",
        "git grep -e -Oops",
        "git -C . --no-pager --literal-pathspecs log -1",
        "find . -name '*.txt' -exec tar -cf {}.tar {} ;",  # the path found, not an option
        "find . -name notes.txt -exec git grep --no-index -e one -- {} ;",
    ],
)
def test_ordinary_commands_of_these_programs_still_run(
    disk_kit: ad.Toolkit, repo: Path, command: str
) -> None:
    shell = Shell(disk_kit, sandbox=False, cwd=repo, allow=("find", "git", "tar"))
    result = shell(command)
    assert b"[exit " in result.payload
    assert b"not an allowed" not in result.payload


def test_allow_shell_leaves_the_options_alone(disk_kit: ad.Toolkit, repo: Path) -> None:
    """A shell runs anything: its options bound nothing more."""
    shell = Shell(disk_kit, sandbox=False, cwd=repo, allow_shell=True)
    shell("git -c alias.x='!touch pwned' x")
    assert (repo / "pwned").exists()


def git(repo: Path, *args: str) -> None:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def test_git_config_is_read_as_git_reads_it(disk_kit: ad.Toolkit, repo: Path) -> None:
    """A name alone is a read; a value after it is a write, whatever follows."""
    shell = Shell(disk_kit, sandbox=False, cwd=repo, allow=("git",))
    assert shell("git config user.name").payload == b"A\n[exit 0]"
    config = (repo / ".git" / "config").read_text()
    for command in (
        "git config alias.x '!touch pwned' --list",
        "git config --get --add alias.x '!touch pwned'",
        "git config -e",
        "git config --li alias.x '!touch pwned'",
        "git config --get set alias.x '!touch pwned'",
    ):
        with pytest.raises(ad.ScopeError, match="git config may only be read"):
            shell(command)
    assert (repo / ".git" / "config").read_text() == config


def test_a_git_alias_cannot_hide_the_command_it_runs(disk_kit: ad.Toolkit, repo: Path) -> None:
    """`rb` is `rebase` in this repository's config: `git rb -x` is `git rebase -x`."""
    git(repo, "config", "alias.rb", "rebase")
    git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    shell = Shell(disk_kit, sandbox=False, cwd=repo, allow=("git",))
    with pytest.raises(ad.ScopeError) as caught:
        shell("git rb -x 'touch pwned' HEAD~1")
    message = str(caught.value)
    assert "git's own command" in message and "\n" not in message
    assert "nothing was run" in message
    with pytest.raises(ad.ScopeError, match="git's own command"):
        shell("git no-such-extension")
    assert not (repo / "pwned").exists()
    assert shell("git rebase HEAD~1").payload.endswith(b"[exit 0]")


def test_without_git_on_path_its_commands_are_not_listed(
    disk_kit: ad.Toolkit, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list of git's commands comes from the git on PATH; with none, the command
    cannot run, and is not refused for want of the list."""
    monkeypatch.setenv("PATH", str(repo / "nowhere"))
    shell = Shell(disk_kit, sandbox=False, cwd=repo, allow=("git",))
    with pytest.raises(ad.ArgumentError, match="cannot start 'git'"):
        shell("git rb HEAD")


@pytest.mark.parametrize("quiet", ["--quiet", "-q"])
def test_git_submodule_foreach_after_an_option_is_refused(
    disk_kit: ad.Toolkit, repo: Path, quiet: str
) -> None:
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", str(repo), "sub")
    git(repo, "commit", "-q", "-m", "sub")
    shell = Shell(disk_kit, sandbox=False, cwd=repo, allow=("git",))
    with pytest.raises(ad.ScopeError, match="submodule foreach"):
        shell(f"git submodule {quiet} foreach 'touch ../pwned'")
    assert not (repo / "pwned").exists()


def test_zip_tt_is_run_by_a_shell(disk_kit: ad.Toolkit, repo: Path) -> None:
    shell = Shell(disk_kit, sandbox=False, cwd=repo, allow=("zip", "find"))
    with pytest.raises(ad.ScopeError, match="plain words"):
        shell("zip -T -TT 'find . -quit ; touch pwned #' a.zip notes.txt")
    with pytest.raises(ad.ScopeError, match="plain words"):
        shell("zip -T -qTT'find . -quit ; touch pwned #' a.zip notes.txt")
    assert not (repo / "pwned").exists() and not (repo / "a.zip").exists()


def test_a_shell_builtin_cannot_start_a_command_line(disk_kit: ad.Toolkit, repo: Path) -> None:
    """Without `allow`, any program but a shell may run: `.` is not a program, but the
    shell tar hands -I to reads the file it names as shell code."""
    (repo / "evil").write_text("touch pwned\n")
    shell = Shell(disk_kit, sandbox=False, cwd=repo)
    with pytest.raises(ad.ScopeError, match="plain words"):
        shell("tar -c -f a.tar -I '. ./evil' notes.txt")
    assert not (repo / "pwned").exists()


def test_find_reads_the_value_of_its_tests(disk_kit: ad.Toolkit, repo: Path) -> None:
    """`-name -exec` is a name: the -exec that follows `!` runs sh, and is refused."""
    shell = Shell(disk_kit, sandbox=False, cwd=repo)
    with pytest.raises(ad.ScopeError, match="shell or a command runner"):
        shell("find . -maxdepth 0 -name -exec ! -exec sh -c 'touch pwned' ;")
    assert not (repo / "pwned").exists()


def test_a_compressor_that_is_allowed_still_runs(disk_kit: ad.Toolkit, repo: Path) -> None:
    shell = Shell(disk_kit, sandbox=False, cwd=repo, allow=("tar", "zstd", "gzip"))
    assert shell("tar -c -f a.tzst -I zstd notes.txt").payload.endswith(b"[exit 0]")
    assert shell("tar -c -f a.tgz -I 'gzip -9' notes.txt").payload.endswith(b"[exit 0]")
    assert (repo / "a.tzst").read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    assert (repo / "a.tgz").read_bytes()[:2] == b"\x1f\x8b"


@pytest.mark.parametrize(
    ("command", "allow"),
    [
        pytest.param("go run ./cmd/x -exec foo", ("go",), id="go run: the program's flags"),
        pytest.param("fd -tx foo", ("fd",), id="fd -t takes a value"),
        pytest.param("fd -e py -x wc -l", ("fd", "wc"), id="fd -x an allowed program"),
    ],
)
def test_programs_not_installed_are_not_refused_for_ordinary_options(
    disk_kit: ad.Toolkit, tmp_path: Path, command: str, allow: tuple[str, ...]
) -> None:
    """The check passes: the program is then not found (not installed here)."""
    shell = Shell(disk_kit, sandbox=False, cwd=tmp_path, allow=allow)
    with pytest.raises(ad.ArgumentError, match="cannot start"):
        shell(command)


@pytest.mark.parametrize(
    ("command", "allow"),
    [
        pytest.param(
            "ssh -o StrictHostKeyChecking=no -o ConnectTimeout=1 -p 1 127.0.0.1 true",
            ("ssh",),
            id="ssh -o a setting that runs nothing",
        ),
        pytest.param("wget -q -t 1 -O - http://127.0.0.1:1/", ("wget",), id="wget"),
        pytest.param(
            "ssh -o ConnectTimeout=1 -J me@127.0.0.1:1 -p 1 127.0.0.1 true",
            ("ssh",),
            id="ssh -J a host",
        ),
    ],
)
def test_ordinary_options_of_ssh_and_wget_still_run(
    disk_kit: ad.Toolkit, tmp_path: Path, command: str, allow: tuple[str, ...]
) -> None:
    result = Shell(disk_kit, sandbox=False, cwd=tmp_path, allow=allow)(command)
    assert b"[exit " in result.payload and b"[exit 0]" not in result.payload  # nothing listens


def test_for_each_repo_would_run_the_alias_it_is_given(disk_kit: ad.Toolkit, repo: Path) -> None:
    # The route itself, shown to run a program: git for-each-repo runs `git -C false
    # WORDS` for core.bare's value, so a repository named "false" runs the alias.
    subprocess.run(["git", "init", "-q", "false"], cwd=repo, check=True)
    command = "git for-each-repo --config=core.bare -- -c alias.x='!touch ../pwned' x"
    subprocess.run(["sh", "-c", f"git {command[4:]}"], cwd=repo, capture_output=True)
    assert (repo / "pwned").exists()
    (repo / "pwned").unlink()
    with pytest.raises(ad.ScopeError, match="for-each-repo"):
        Shell(disk_kit, sandbox=False, cwd=repo, allow=("git",))(command)
    assert not (repo / "pwned").exists()
