# bench/alltoall/local.mk - automake fragment for the alltoall benchmark.
#
# Include it from the top-level Makefile.am (`include bench/alltoall/local.mk`)
# after configure.ac has:
#     AC_PATH_PROG([MPICC], [mpicc])
#     AM_CONDITIONAL([HAVE_MPICC], [test -n "$MPICC"])
# The benchmark is built with the MPI compiler wrapper, not with $(CC), so it
# has an explicit rule instead of a _PROGRAMS entry.  It is not installed:
# scripts/alltoall-ab builds its own copy (--build-dir) when none is given.

EXTRA_DIST += bench/alltoall/a2a-bench.c bench/alltoall/local.mk

if HAVE_MPICC
A2A_BENCH = bench/alltoall/a2a-bench
check_SCRIPTS = $(A2A_BENCH)
CLEANFILES += $(A2A_BENCH)

$(A2A_BENCH): $(srcdir)/bench/alltoall/a2a-bench.c
	$(MKDIR_P) bench/alltoall
	$(MPICC) -O2 -o $@ $(srcdir)/bench/alltoall/a2a-bench.c
endif
