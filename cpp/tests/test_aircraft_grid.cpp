// aircraft's SpatialGrid: a query returns every point within one cell size
// (a superset of the comm_radius neighbourhood), each once, in a fixed order
// with ids increasing inside a cell; left-out points never appear.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "aircraft/spatial_grid.hpp"
#include "check.hpp"
#include "seer/rng.hpp"

namespace {

}  // namespace

int main() {
  seer::EntityRng rng(7, 0);
  for (double radius : {3.0, 10.0, 35.0, 500.0}) {
    const double half = 40.0;
    const std::uint32_t n = 600;
    std::vector<double> x(n), y(n);
    std::vector<bool> in(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      // Some points on the border and slightly outside (clamped to border cells).
      x[i] = (2.0 * rng.uniform() - 1.0) * half * 1.02;
      y[i] = i % 50 == 0 ? half : (2.0 * rng.uniform() - 1.0) * half;
      in[i] = i % 7 != 3;
    }
    seer::aircraft::SpatialGrid grid;
    grid.configure(half, radius);
    for (int rebuild = 0; rebuild < 2; ++rebuild) {  // a rebuild gives the same answers
      grid.build(n, [&](std::uint32_t i, double* px, double* py) {
        *px = x[i];
        *py = y[i];
        return static_cast<bool>(in[i]);
      });
      bool superset = true, unique = true, only_in = true;
      for (std::uint32_t q = 0; q < n; ++q) {
        std::vector<int> seen(n, 0);
        grid.for_each_near(x[q], y[q], [&](std::uint32_t id) { ++seen[id]; });
        for (std::uint32_t i = 0; i < n; ++i) {
          const double dx = x[i] - x[q], dy = y[i] - y[q];
          if (in[i] && dx * dx + dy * dy <= radius * radius && seen[i] == 0) superset = false;
          if (seen[i] > 1) unique = false;
          if (!in[i] && seen[i] != 0) only_in = false;
        }
      }
      CHECK(superset, "every point within the radius is visited");
      CHECK(unique, "no point is visited twice");
      CHECK(only_in, "left-out points are never visited");
    }
  }
  return check::report("test_aircraft_grid");
}
