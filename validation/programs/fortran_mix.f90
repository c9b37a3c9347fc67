! Fortran program (use mpi) with blocking, nonblocking and collective calls, traced through the
! Fortran wrappers: a ring of MPI_SEND/MPI_RECV (the receive from MPI_ANY_SOURCE with
! MPI_STATUS_IGNORE), a halo exchange with MPI_ISEND/MPI_IRECV and MPI_WAITALL
! (MPI_STATUSES_IGNORE), MPI_SENDRECV, MPI_WAITANY and MPI_TEST, then MPI_BCAST, MPI_REDUCE,
! MPI_ALLREDUCE with MPI_IN_PLACE, MPI_GATHER, MPI_ALLTOALL and MPI_BARRIER, a
! MPI_COMM_SPLIT, MPI_ALLTOALLW (an array of datatype handles) and MPI_NEIGHBOR_ALLGATHER on a
! periodic ring made with MPI_CART_CREATE.
!
! usage: fortran_mix [rounds=3]
program fortran_mix
  use mpi
  implicit none
  integer, parameter :: n = 100
  integer :: ierr, rank, nprocs, nxt, prv, i, round, rounds, idx, half
  integer :: req(4), status(MPI_STATUS_SIZE)
  logical :: done
  double precision :: a(n), b(n), c(n), s
  integer, allocatable :: sendv(:), recvv(:), cnts(:), displs(:), types(:)
  integer :: ring, nb(2)
  character(len=16) :: arg

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  rounds = 3
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) rounds
  end if
  nxt = mod(rank + 1, nprocs)
  prv = mod(rank + nprocs - 1, nprocs)
  a = rank
  allocate (sendv(nprocs), recvv(nprocs))

  do round = 1, rounds
    ! Blocking ring, rank 0 first; the others receive from anyone.
    if (rank == 0) then
      call MPI_SEND(a, n, MPI_DOUBLE_PRECISION, nxt, 1, MPI_COMM_WORLD, ierr)
      call MPI_RECV(b, n, MPI_DOUBLE_PRECISION, prv, 1, MPI_COMM_WORLD, status, ierr)
    else
      call MPI_RECV(b, n, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
      s = 0
      do i = 1, 200000
        s = s + sqrt(dble(i))
      end do
      a(1) = s
      call MPI_SEND(a, n, MPI_DOUBLE_PRECISION, nxt, 1, MPI_COMM_WORLD, ierr)
    end if
    ! Nonblocking exchange with both neighbours.
    call MPI_IRECV(b, n, MPI_DOUBLE_PRECISION, prv, 2, MPI_COMM_WORLD, req(1), ierr)
    call MPI_IRECV(c, n, MPI_DOUBLE_PRECISION, nxt, 3, MPI_COMM_WORLD, req(2), ierr)
    call MPI_ISEND(a, n, MPI_DOUBLE_PRECISION, nxt, 2, MPI_COMM_WORLD, req(3), ierr)
    call MPI_ISEND(a, n, MPI_DOUBLE_PRECISION, prv, 3, MPI_COMM_WORLD, req(4), ierr)
    call MPI_WAITALL(4, req, MPI_STATUSES_IGNORE, ierr)
  end do

  call MPI_SENDRECV(a, 10, MPI_DOUBLE_PRECISION, nxt, 4, b, 10, MPI_DOUBLE_PRECISION, prv, 4, &
                    MPI_COMM_WORLD, status, ierr)
  call MPI_IRECV(b, 5, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, req(1), ierr)
  call MPI_ISEND(a, 5, MPI_DOUBLE_PRECISION, nxt, 5, MPI_COMM_WORLD, req(2), ierr)
  call MPI_WAITANY(2, req, idx, status, ierr)
  call MPI_WAITANY(2, req, idx, status, ierr)
  call MPI_IRECV(b, 6, MPI_DOUBLE_PRECISION, prv, 6, MPI_COMM_WORLD, req(1), ierr)
  call MPI_ISEND(a, 6, MPI_DOUBLE_PRECISION, nxt, 6, MPI_COMM_WORLD, req(2), ierr)
  done = .false.
  do while (.not. done)
    call MPI_TEST(req(1), done, status, ierr)
  end do
  call MPI_WAIT(req(2), MPI_STATUS_IGNORE, ierr)

  call MPI_BCAST(a, n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call MPI_REDUCE(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call MPI_ALLREDUCE(MPI_IN_PLACE, a, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  sendv = rank
  call MPI_GATHER(sendv, 1, MPI_INTEGER, recvv, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_ALLTOALL(sendv, 1, MPI_INTEGER, recvv, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  call MPI_BARRIER(half, ierr)
  call MPI_COMM_FREE(half, ierr)
  ! One integer to and from every rank, displacements in bytes, one datatype handle per peer.
  allocate (cnts(nprocs), displs(nprocs), types(nprocs))
  cnts = 1
  types = MPI_INTEGER
  do i = 1, nprocs
    displs(i) = 4 * (i - 1)
  end do
  call MPI_ALLTOALLW(sendv, cnts, displs, types, recvv, cnts, displs, types, MPI_COMM_WORLD, ierr)
  call MPI_CART_CREATE(MPI_COMM_WORLD, 1, [nprocs], [.true.], .false., ring, ierr)
  call MPI_NEIGHBOR_ALLGATHER(rank, 1, MPI_INTEGER, nb, 1, MPI_INTEGER, ring, ierr)
  call MPI_COMM_FREE(ring, ierr)
  deallocate (cnts, displs, types)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,es20.12)', 'fortran_mix: done on ', nprocs, ' ranks, sum ', sum(c)
  deallocate (sendv, recvv)
  call MPI_FINALIZE(ierr)
end program fortran_mix
