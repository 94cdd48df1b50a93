package gitcli

import "syscall"

// setDeathSignal makes the kernel SIGKILL the child when the thread that
// started it exits (Linux: prctl PR_SET_PDEATHSIG), so a git child dies
// with the server even on kill -9.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
