! Call sites from Fortran (timeless trace --callsites): the same mpi_send from two source lines
! (use mpi), in a loop. Built with -g; the tests find the expected lines by the SITE markers.
program callsites_f
  use mpi
  implicit none
  integer :: rank, nprocs, ierr, i, peer
  double precision :: buf(8)
  buf = 0d0
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nprocs, ierr)
  peer = ieor(rank, 1)
  do i = 1, 5
     if (mod(rank, 2) == 0) then
        call mpi_send(buf, 8, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, ierr) ! SITE FA
        call mpi_send(buf, 8, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, ierr) ! SITE FB
     else
        call mpi_recv(buf, 8, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, &
             MPI_STATUS_IGNORE, ierr)
        call mpi_recv(buf, 8, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, &
             MPI_STATUS_IGNORE, ierr)
     end if
  end do
  call mpi_finalize(ierr)
end program callsites_f
