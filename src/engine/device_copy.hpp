// copy_to_host() is public (zarrdirect/array.hpp); defined in the engine (no CUDA) or src/cuda.
#pragma once

#include "zarrdirect/array.hpp"
