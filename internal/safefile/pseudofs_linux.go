package safefile

import (
	"os"

	"golang.org/x/sys/unix"
)

// pseudoFSNames are the kernel pseudo file systems whose files may stat as
// regular and still block a reader or act on being read (statfs(2) f_type).
var pseudoFSNames = map[uint32]string{
	unix.PROC_SUPER_MAGIC:    "procfs",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.CGROUP_SUPER_MAGIC:  "cgroup",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	unix.DEVPTS_SUPER_MAGIC:  "devpts",
	0x62656570:               "configfs", // CONFIGFS_MAGIC,
	unix.BPF_FS_MAGIC:        "bpf",
	unix.PSTOREFS_MAGIC:      "pstore",
	unix.EFIVARFS_MAGIC:      "efivarfs",
	0x65735543:               "fusectl", // FUSE_CTL_SUPER_MAGIC,
	unix.SELINUX_MAGIC:       "selinuxfs",
	unix.SMACK_MAGIC:         "smackfs",
	unix.BINFMTFS_MAGIC:      "binfmt_misc",
	unix.NSFS_MAGIC:          "nsfs",
}

// pseudoFS returns the name of the pseudo file system f is on, or "" (also
// when fstatfs fails: the caller's other checks stand).
func pseudoFS(f *os.File) string {
	rc, err := f.SyscallConn()
	if err != nil {
		return ""
	}
	var st unix.Statfs_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fstatfs(int(fd), &st) }); err != nil || serr != nil {
		return ""
	}
	return pseudoFSNames[uint32(st.Type)]
}
