package hostile

import (
	"os"
	"path/filepath"
	"syscall"
)

// OutTarget is a path an output option (-o FILE) may be given that is not
// a regular file: writing through it would replace a device node, a FIFO,
// a socket, a symbolic link or a directory with a regular file.
type OutTarget struct {
	Name string // what stands at Path, as the refusal names it
	Path string
}

// OutTargets makes, under dir, one of each kind of non-regular file a
// write-and-rename output must refuse: a FIFO, a symbolic link (to a
// regular file, which must not be followed and replaced either), a
// dangling symbolic link, a directory, a Unix socket node and, as root, a
// character device node with /dev/null's numbers (1, 3). The system's own
// /dev/null is never named: a regression would replace the node every
// process on the machine writes to; the copy in dir stands for it.
func OutTargets(dir string) ([]OutTarget, error) {
	fifo := filepath.Join(dir, "out-fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		return nil, err
	}
	real := filepath.Join(dir, "out-real.toml")
	if err := os.WriteFile(real, []byte("# kept\n"), 0o644); err != nil {
		return nil, err
	}
	link := filepath.Join(dir, "out-link.toml")
	if err := os.Symlink(real, link); err != nil {
		return nil, err
	}
	dangling := filepath.Join(dir, "out-dangling.toml")
	if err := os.Symlink(filepath.Join(dir, "nowhere.toml"), dangling); err != nil {
		return nil, err
	}
	sub := filepath.Join(dir, "out-dir.toml")
	if err := os.Mkdir(sub, 0o755); err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "out.sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		return nil, err
	}
	targets := []OutTarget{
		{"a FIFO", fifo},
		{"a symbolic link", link},
		{"a symbolic link", dangling},
		{"a directory", sub},
		{"a socket", sock},
	}
	if os.Geteuid() == 0 {
		null := filepath.Join(dir, "null")
		if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3 /* Linux makedev(1, 3) */); err != nil {
			return nil, err
		}
		targets = append(targets, OutTarget{"a character device", null})
	}
	return targets, nil
}
