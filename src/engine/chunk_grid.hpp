// The chunk planning shared by reads and writes (which cells of a chunk grid a region touches,
// and the box where each one meets the region) lives in util/geometry.hpp, one module for both
// directions; the writer includes it through this header.
#pragma once

#include "util/geometry.hpp"
