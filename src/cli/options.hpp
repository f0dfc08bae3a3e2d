// Options shared by the commands that read (read, bench), turned into library values. Mistakes
// in them are UsageError (exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zarrdirect/array.hpp"
#include "zarrdirect/selection.hpp"

namespace zarrdirect::cli {

// "cpu", "cuda" (or "gpu"), "cuda:N": text that is none of those is UsageError; a cuda device
// when none is usable is Error(cuda) saying to use cpu; an ordinal this machine lacks is
// Error(invalid_argument) naming it and the count.
DeviceSpec parse_device(const std::string& text);

// The environment's settings (ZARRDIRECT_*) with the command line's on top.
// `decode`: --decode's text (auto, gpu, cpu or share; empty: ZARRDIRECT_DECODE or the default).
Settings settings_from(unsigned threads, const std::string& io_path, bool o_direct, const std::string& decode = {});

// --region against the array's shape: NumPy syntax with "..." (zarrdirect/region.hpp). Any
// fault in it, syntax or bounds, is UsageError naming the dimension.
Region parse_region_option(const std::string& text, const std::vector<std::uint64_t>& shape);

// `read`'s --region: the same syntax with steps, negative too ("::2,5,10:0:-3", "...,::-1";
// zarrdirect/selection.hpp). A bare index keeps its dimension with extent 1, as in
// parse_region_option. Faults are UsageError naming the item.
Selection parse_selection_option(const std::string& text, const std::vector<std::uint64_t>& shape);

// --output must name a .npy file (the one format written), unless it names an existing device
// or FIFO (/dev/stdout, a pipe), which takes the .npy bytes as they are. UsageError otherwise.
void check_output_option(const std::string& output);

// Bytes of `region` read as `dtype` (saturating: the read itself refuses what does not fit).
std::uint64_t region_nbytes(const Region& region, const DataType& dtype);

}  // namespace zarrdirect::cli
