# bench/alltoall/local.mk - automake fragment for the alltoall benchmark.
#
# Include it from the top-level Makefile.am (`include bench/alltoall/local.mk`)
# after configure.ac has:
#     AC_PATH_PROG([MPICC], [mpicc])
#     AM_CONDITIONAL([HAVE_MPICC], [test -n "$MPICC"])
#     AC_PATH_PROG([SMPICC], [smpicc])
#     AM_CONDITIONAL([HAVE_SMPICC], [test -n "$SMPICC"])
# The benchmark is built with the MPI compiler wrapper, not with $(CC), so it
# has an explicit rule instead of a _PROGRAMS entry.  The same source built
# with SimGrid's smpicc (a2a-bench-smpi) runs under smpirun: there it takes
# its buffers from SMPI_SHARED_MALLOC and skips the data check.  Both are
# built by `make` and installed into $(pkglibexecdir) (not on PATH: they are
# alltoall-ab's helpers; osmoffset.paths finds them through _installdirs);
# scripts/alltoall-ab builds its own copy (--build-dir) when none is given.

EXTRA_DIST += bench/alltoall/a2a-bench.c bench/alltoall/local.mk
pkglibexec_SCRIPTS =

if HAVE_MPICC
A2A_BENCH = bench/alltoall/a2a-bench
pkglibexec_SCRIPTS += $(A2A_BENCH)
CLEANFILES += $(A2A_BENCH)

$(A2A_BENCH): $(srcdir)/bench/alltoall/a2a-bench.c
	$(MKDIR_P) bench/alltoall
	$(MPICC) -O2 -o $@ $(srcdir)/bench/alltoall/a2a-bench.c
endif

if HAVE_SMPICC
A2A_BENCH_SMPI = bench/alltoall/a2a-bench-smpi
pkglibexec_SCRIPTS += $(A2A_BENCH_SMPI)
CLEANFILES += $(A2A_BENCH_SMPI)
AM_TESTS_ENVIRONMENT += \
	OSMOFFSET_A2A_BENCH_SMPI='$(abs_top_builddir)/$(A2A_BENCH_SMPI)'; \
	export OSMOFFSET_A2A_BENCH_SMPI;

$(A2A_BENCH_SMPI): $(srcdir)/bench/alltoall/a2a-bench.c
	$(MKDIR_P) bench/alltoall
	$(SMPICC) -O2 -o $@ $(srcdir)/bench/alltoall/a2a-bench.c
endif
