! Fortran 2008 bindings (use mpi_f08): a ring of MPI_Send/MPI_Recv (the receive from
! MPI_ANY_SOURCE with MPI_STATUS_IGNORE), MPI_Isend/MPI_Irecv completed by MPI_Waitall, and
! MPI_Allreduce. Open MPI's mpi_f08 bindings call its common Fortran implementation
! (ompi_*_f) directly, which the tracer wraps too.
program fortran_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, nxt, prv
  double precision :: a(50), b(50), c(50)
  type(MPI_Request) :: req(2)
  type(MPI_Status) :: st

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  nxt = mod(rank + 1, nprocs)
  prv = mod(rank + nprocs - 1, nprocs)
  a = rank
  if (rank == 0) then
    call MPI_Send(a, 50, MPI_DOUBLE_PRECISION, nxt, 1, MPI_COMM_WORLD)
    call MPI_Recv(b, 50, MPI_DOUBLE_PRECISION, prv, 1, MPI_COMM_WORLD, st)
  else
    call MPI_Recv(b, 50, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &
                  MPI_STATUS_IGNORE)
    call MPI_Send(a, 50, MPI_DOUBLE_PRECISION, nxt, 1, MPI_COMM_WORLD)
  end if
  call MPI_Irecv(c, 50, MPI_DOUBLE_PRECISION, prv, 2, MPI_COMM_WORLD, req(1))
  call MPI_Isend(a, 50, MPI_DOUBLE_PRECISION, nxt, 2, MPI_COMM_WORLD, req(2))
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
  call MPI_Allreduce(MPI_IN_PLACE, a, 50, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a,es20.12)', 'fortran_f08: done on ', nprocs, ' ranks, sum ', &
                          sum(a) + sum(b) + sum(c)
  call MPI_Finalize()
end program fortran_f08
