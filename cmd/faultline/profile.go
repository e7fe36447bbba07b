package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles starts what --cpuprofile and --memprofile ask for (an
// empty path: not that one); the function it returns writes and closes
// them. The memory profile counts every allocation of the command, as
// sampled by the runtime: what it allocated, not only what it kept.
func startProfiles(cpuPath, memPath string) (func() error, error) {
	stopCPU := func() error { return nil }
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("cpu profile %s: %w", cpuPath, err)
		}
		stopCPU = func() error {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				return fmt.Errorf("cpu profile %s: %w", cpuPath, err)
			}
			return nil
		}
	}
	return func() error {
		err := stopCPU()
		if memPath == "" {
			return err
		}
		return errors.Join(err, writeMemProfile(memPath))
	}, nil
}

func writeMemProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("memory profile: %w", err)
	}
	// The profile counts up to the last collection: one now counts all.
	runtime.GC()
	err = pprof.Lookup("allocs").WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("memory profile %s: %w", path, err)
	}
	return nil
}
