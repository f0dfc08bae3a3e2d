// The .npy reader and writer are public (zarrdirect/npy.hpp); this header keeps their place in util.
#pragma once

#include "zarrdirect/npy.hpp"
