! commkinds.c in Fortran (`use mpi`): every kind of communicator creation and one communication
! on each, 4 ranks exactly. The profile tests expect the same names, sizes, calls and bytes as
! for the C program (simulator/cli/tests/profile_mpi.rs). Prints "commkinds_f: ok".
program commkinds_f
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, one, total, prank, me, req, cart, row, par, node, dup, idup
  integer :: world_group, g03, c03, cg, pg, inter, merged
  integer :: dims(2), r03(2), stat(MPI_STATUS_SIZE), reqs(1)
  integer :: graph, dga, dg, index(4), edges(8), nb(2), src(1), deg(1)
  logical :: periods(2), remain(2)
  character(len=128) :: buf, buf2
  double precision :: d, dsum

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs /= 4) call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  buf = repeat('x', 128)
  one = rank

  ! 1. Cartesian 2x2: allreduce of one integer.
  dims = (/ 2, 2 /)
  periods = (/ .false., .false. /)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, cart, ierr)

  ! 2. Rows: bcast of 8 bytes from the row's rank 0.
  remain = (/ .false., .true. /)
  call MPI_Cart_sub(cart, remain, row, ierr)
  call MPI_Bcast(buf, 8, MPI_BYTE, 0, row, ierr)

  ! 3. Split by parity: comm rank 0 sends 100 bytes to comm rank 1.
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, par, ierr)
  call MPI_Comm_rank(par, prank, ierr)
  if (prank == 0) then
    call MPI_Send(buf, 100, MPI_BYTE, 1, 5, par, ierr)
  else
    call MPI_Recv(buf2, 100, MPI_BYTE, 0, 5, par, stat, ierr)
  end if

  ! 4. Shared-memory node: barrier.
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node, ierr)
  call MPI_Barrier(node, ierr)

  ! 5. Dup: alltoall of 4 bytes per peer.
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Alltoall(buf, 4, MPI_BYTE, buf2, 4, MPI_BYTE, dup, ierr)

  ! 6. Idup: allgather of 4 bytes.
  call MPI_Comm_idup(MPI_COMM_WORLD, idup, req, ierr)
  call MPI_Wait(req, stat, ierr)
  call MPI_Allgather(buf, 4, MPI_BYTE, buf2, 4, MPI_BYTE, idup, ierr)

  ! 7. Create of world ranks {0, 3}: sendrecv of 50 bytes each way.
  call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
  r03 = (/ 0, 3 /)
  call MPI_Group_incl(world_group, 2, r03, g03, ierr)
  call MPI_Comm_create(MPI_COMM_WORLD, g03, c03, ierr)
  if (c03 /= MPI_COMM_NULL) then
    call MPI_Comm_rank(c03, me, ierr)
    call MPI_Sendrecv(buf, 50, MPI_BYTE, 1 - me, 0, buf2, 50, MPI_BYTE, 1 - me, 0, c03, &
                      stat, ierr)
  end if

  ! 8. Create_group on the odd half by its members: isend/irecv of 10 bytes, waitall.
  cg = MPI_COMM_NULL
  if (mod(rank, 2) == 1) then
    call MPI_Comm_group(par, pg, ierr)
    call MPI_Comm_create_group(par, pg, 9, cg, ierr)
    call MPI_Comm_rank(cg, me, ierr)
    if (me == 0) then
      call MPI_Isend(buf, 10, MPI_BYTE, 1, 3, cg, reqs(1), ierr)
    else
      call MPI_Irecv(buf2, 10, MPI_BYTE, 0, 3, cg, reqs(1), ierr)
    end if
    call MPI_Waitall(1, reqs, MPI_STATUSES_IGNORE, ierr)
    call MPI_Group_free(pg, ierr)
  end if

  ! 9. Intercommunicator between the parity halves; 10. merged: reduce of 8 bytes.
  if (mod(rank, 2) == 0) then
    call MPI_Intercomm_create(par, 0, MPI_COMM_WORLD, 1, 7, inter, ierr)
  else
    call MPI_Intercomm_create(par, 0, MPI_COMM_WORLD, 0, 7, inter, ierr)
  end if
  call MPI_Intercomm_merge(inter, mod(rank, 2) == 1, merged, ierr)
  d = rank
  call MPI_Reduce(d, dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, merged, ierr)

  ! 11. Graph topology, a ring: neighbour allgather of 4 bytes.
  index = (/ 2, 4, 6, 8 /)
  edges = (/ 3, 1, 0, 2, 1, 3, 2, 0 /)
  call MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, .false., graph, ierr)
  call MPI_Neighbor_allgather(buf, 4, MPI_BYTE, buf2, 4, MPI_BYTE, graph, ierr)
  ! 12. Distributed graph, adjacent form: neighbour alltoall of 4 bytes.
  nb = (/ mod(rank + 3, 4), mod(rank + 1, 4) /)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, MPI_UNWEIGHTED, 2, nb, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., dga, ierr)
  call MPI_Neighbor_alltoall(buf, 4, MPI_BYTE, buf2, 4, MPI_BYTE, dga, ierr)
  ! 13. Distributed graph, general form: barrier.
  src(1) = rank
  deg(1) = 2
  call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, nb, MPI_UNWEIGHTED, MPI_INFO_NULL, &
                             .false., dg, ierr)
  call MPI_Barrier(dg, ierr)
  call MPI_Comm_free(dg, ierr)
  call MPI_Comm_free(dga, ierr)
  call MPI_Comm_free(graph, ierr)
  call MPI_Comm_free(merged, ierr)
  call MPI_Comm_free(inter, ierr)
  if (cg /= MPI_COMM_NULL) call MPI_Comm_free(cg, ierr)
  if (c03 /= MPI_COMM_NULL) call MPI_Comm_free(c03, ierr)
  call MPI_Group_free(g03, ierr)
  call MPI_Group_free(world_group, ierr)
  call MPI_Comm_free(idup, ierr)
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free(node, ierr)
  call MPI_Comm_free(par, ierr)
  call MPI_Comm_free(row, ierr)
  call MPI_Comm_free(cart, ierr)
  if (rank == 0) print '(a)', 'commkinds_f: ok'
  call MPI_Finalize(ierr)
end program commkinds_f
