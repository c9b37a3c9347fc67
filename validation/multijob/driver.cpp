// SimGrid 3.32 reference for timeless's multi-job replay (issue 16, item 3).
//
// Replays several time-independent traces in one simulation, as SimGrid's replay_multiple
// example does, and prints when each rank of each instance started its trace (after its start
// delay) and finished it, to 12 decimals, so timeless can be compared rank by rank.
//
//   driver DESCRIPTION PLATFORM DEPLOYMENT [--cfg=...]
//
// DESCRIPTION: lines `instance_id trace_list ranks delay_flops`. DEPLOYMENT: one actor per rank
// with arguments (instance_id, rank, trace file, delay_flops), function = instance_id.
// Output, one line per rank sorted by instance order then rank: `instance rank start end`,
// then `makespan <clock>`.
#include <simgrid/engine.h>
#include <simgrid/s4u/Engine.hpp>
#include <smpi/smpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {
struct Finish {
  std::string instance;
  int rank;
  double start_secs;
  double end_secs;
};
std::vector<Finish> finishes;
std::vector<std::string> instance_order;

void replay_rank(int argc, char* argv[])
{
  if (argc < 4) {
    std::fprintf(stderr, "driver: an actor needs arguments instance rank trace [delay_flops]\n");
    std::exit(2);
  }
  std::string instance = argv[1];
  int rank             = std::atoi(argv[2]);
  double delay_flops   = argc > 4 ? std::strtod(argv[4], nullptr) : 0.0;
  smpi_replay_init(instance.c_str(), rank, delay_flops);
  double start = simgrid_get_clock();
  smpi_replay_main(rank, argv[3]);
  finishes.push_back({instance, rank, start, simgrid_get_clock()});
}
} // namespace

int main(int argc, char* argv[])
{
  simgrid_init(&argc, argv);
  SMPI_init();
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s DESCRIPTION PLATFORM DEPLOYMENT [--cfg=...]\n", argv[0]);
    return 2;
  }
  simgrid_load_platform(argv[2]);
  std::ifstream description(argv[1]);
  if (!description) {
    std::fprintf(stderr, "driver: cannot open %s\n", argv[1]);
    return 2;
  }
  std::string line;
  while (std::getline(description, line)) {
    std::istringstream fields(line);
    std::string id, list;
    int ranks = 0;
    if (!(fields >> id >> list >> ranks))
      continue;
    instance_order.push_back(id);
    SMPI_app_instance_register(id.c_str(), replay_rank, ranks);
  }
  simgrid_load_deployment(argv[3]);
  simgrid_run();
  auto order = [](const std::string& id) {
    return std::find(instance_order.begin(), instance_order.end(), id) - instance_order.begin();
  };
  std::sort(finishes.begin(), finishes.end(), [&](const Finish& a, const Finish& b) {
    return order(a.instance) != order(b.instance) ? order(a.instance) < order(b.instance) : a.rank < b.rank;
  });
  for (auto const& f : finishes)
    std::printf("%s %d %.12f %.12f\n", f.instance.c_str(), f.rank, f.start_secs, f.end_secs);
  std::printf("makespan %.12f\n", simgrid_get_clock());
  SMPI_finalize();
  return 0;
}
