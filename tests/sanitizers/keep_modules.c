/* tests/sanitizers/keep_modules.c - a dlclose that unloads nothing, preloaded (LD_PRELOAD) into
 * the MPI test programs of the ASan build only (tests/CMakeLists.txt, px_mpi_test_env).
 *
 * Open MPI opens its components (mca_*.so) with dlopen and closes them in MPI_Finalize, so by
 * the time LeakSanitizer looks, at exit, the blocks those components allocated and kept point
 * into unmapped code: "(<unknown module>)", which no suppression can name. The slow unwinder
 * (fast_unwind_on_malloc=0) found the library frames further up instead, at about 1 s more
 * CPU a 2-rank run on CI's VM, half of the ASan pass's MPI time (bench/RESULTS.md, session 26).
 * With every module kept mapped, the fast unwinder's first frame names the component and
 * tests/sanitizers/lsan-mpi.supp suppresses it.
 *
 * Nothing is unloaded in these processes, which is all this changes: a dlclose that succeeds
 * may unmap the module or not (POSIX leaves it to the implementation), and no test here relies
 * on a module's being gone. Built without a sanitizer, so that the ASan runtime it would need
 * does not come before the program's own (ASAN_OPTIONS verify_asan_link_order=0 lets a
 * preloaded library come first). */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
