// describe_system() and print_system() are public (zarrdirect/system.hpp); defined in the engine
// (no CUDA) or in src/cuda (CUDA builds).
#pragma once

#include "zarrdirect/system.hpp"
