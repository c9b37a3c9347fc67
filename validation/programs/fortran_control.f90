! Tracing switched off and on from a Fortran program (use mpi): a ring exchange per phase (tag =
! phase number) after a compute loop, heavy in phases 1, 2 and 4. Phase 2 runs between
! MPI_PCONTROL(0) and MPI_PCONTROL(1), phase 4 between MPI_INFO_SET(info, 'TIMELESS_TRACING',
! 'OFF') and 'ON': a trace holds the messages of phases 1, 3 and 5 only.
!
! usage: fortran_control [heavy iterations=10000000]
program fortran_control
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, info, heavy
  integer(kind=8) :: total, s
  character(len=32) :: arg

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  heavy = 10000000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) heavy
  end if
  s = phase(1, heavy)
  call MPI_PCONTROL(0)
  s = s + 2 * phase(2, heavy)
  call MPI_PCONTROL(1)
  s = s + 3 * phase(3, 1000)
  call MPI_INFO_CREATE(info, ierr)
  call MPI_INFO_SET(info, 'TIMELESS_TRACING', 'OFF', ierr)
  s = s + 4 * phase(4, heavy)
  call MPI_INFO_SET(info, 'TIMELESS_TRACING', 'ON', ierr)
  call MPI_INFO_FREE(info, ierr)
  s = s + 5 * phase(5, 1000)
  call MPI_REDUCE(s, total, 1, MPI_INTEGER8, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0)', 'fortran_control: ', nprocs, ' ranks, checksum ', total
  call MPI_FINALIZE(ierr)

contains

  integer(kind=8) function phase(tag, iterations)
    integer, intent(in) :: tag, iterations
    integer :: i, nxt, prv
    integer(kind=8) :: outv, inv
    double precision :: x
    x = 1.0d0
    do i = 1, iterations
      x = x * 1.0000001d0 + 1.0d-9
    end do
    if (x < 0) print *, x
    nxt = mod(rank + 1, nprocs)
    prv = mod(rank + nprocs - 1, nprocs)
    outv = rank + tag
    if (rank == 0) then
      call MPI_SEND(outv, 1, MPI_INTEGER8, nxt, tag, MPI_COMM_WORLD, ierr)
      call MPI_RECV(inv, 1, MPI_INTEGER8, prv, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_RECV(inv, 1, MPI_INTEGER8, prv, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call MPI_SEND(outv, 1, MPI_INTEGER8, nxt, tag, MPI_COMM_WORLD, ierr)
    end if
    phase = inv
  end function phase
end program fortran_control
