// Prints every host-to-host route of a SimGrid platform: "src -> dst | latency | link,link,..."
#include <simgrid/s4u.hpp>
#include <cstdio>
#include <algorithm>
#include <map>
#include <cstring>
namespace sg4 = simgrid::s4u;
int main(int argc, char** argv) {
  sg4::Engine e(&argc, argv);
  try { e.load_platform(argv[1]); e.seal_platform(); } catch (std::exception& ex) { printf("LOADERROR %s\n", ex.what()); return 0; }
  printf("LOADED\n");
  auto hosts = e.get_all_hosts();
  std::sort(hosts.begin(), hosts.end(), [](auto a, auto b){ return a->get_name() < b->get_name(); });
  for (auto* h : hosts) {
    printf("HOST %s speed=%.17g cores=%d", h->get_cname(), h->get_speed(), h->get_core_count());
    if (auto* pr = h->get_properties()) { std::map<std::string,std::string> m(pr->begin(), pr->end()); for (auto const& [k, v] : m) printf(" %s=%s", k.c_str(), v.c_str()); }
    printf("\n");
  }
  auto links = e.get_all_links();
  std::sort(links.begin(), links.end(), [](auto a, auto b){ return a->get_name() < b->get_name(); });
  for (auto* l : links)
    printf("LINK %s bw=%.17g lat=%.17g policy=%d\n", l->get_cname(), l->get_bandwidth(), l->get_latency(), (int)l->get_sharing_policy());
  for (auto* s : hosts) for (auto* d : hosts) {
    if (argc > 3 && (strcmp(argv[2], s->get_cname()) || strcmp(argv[3], d->get_cname()))) continue;
    fflush(stdout);
    std::vector<sg4::Link*> r; double lat = 0;
    try { s->route_to(d, r, &lat); } catch (std::exception& ex) { printf("ROUTE %s -> %s | ERROR %s\n", s->get_cname(), d->get_cname(), ex.what()); continue; }
    printf("ROUTE %s -> %s | %.17g |", s->get_cname(), d->get_cname(), lat);
    for (size_t i = 0; i < r.size(); i++) printf("%s%s", i ? "," : " ", r[i]->get_cname());
    printf("\n");
  }
  return 0;
}
