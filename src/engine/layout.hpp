// The engine's name for chunk geometry and box copies, which live in util/ (geometry.hpp,
// box_copy.hpp) so that codec and store use them without reaching up into the engine.
#pragma once

#include "util/box_copy.hpp"
#include "util/geometry.hpp"
