// Attribute record of the mpi_collective op (its definition: mpi_collective.cc).
#pragma once
#include <cstdint>

#include "op_def.h"

namespace tinyxla::ops {

// mpi_collective(x) -> y: an MPI collective over the processes of a job, run by the device
// thread that runs the node (jax.distributed, python/tinyxla/_src/distributed.py).
// collective 0 is an all-reduce (y has x's type), 1 an all-gather (y is [processes, ...x]).
// comm, datatype and reduce_op are the MPI handles of the communicator, of x's element
// type and of the reduction, as mpi4py's MPI._handleof gives them. The MPI functions come
// from the process's MPI library (set_mpi_functions), so the core does not link MPI.
struct MpiCollectiveAttrs {
  int64_t collective = 0;
  int64_t comm = 0;
  int64_t datatype = 0;
  int64_t reduce_op = 0;
  int64_t processes = 1;
  int64_t timeout_ms = 300000;  // then the op fails: a peer process may be gone
  template <class V> void visit(V& v) {
    v("collective", collective);
    v("comm", comm);
    v("datatype", datatype);
    v("reduce_op", reduce_op);
    v("processes", processes);
    v("timeout_ms", timeout_ms);
  }
};

// The addresses of MPI_Iallreduce, MPI_Iallgather and MPI_Test in the loaded MPI library
// (0 for all: none).
void set_mpi_functions(intptr_t iallreduce, intptr_t iallgather, intptr_t test);

}  // namespace tinyxla::ops
