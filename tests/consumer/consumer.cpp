// Reads an array with the installed zarrdirect and checks it against the .npy NumPy saved for it:
//   consumer ARRAY_FOLDER EXPECTED.npy    -> prints shape and "equal", exit 0; 1 otherwise.
#include <cstdio>
#include <cstring>
#include <exception>

#include <zarrdirect/array.hpp>
#include <zarrdirect/npy.hpp>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: consumer ARRAY EXPECTED.npy\n");
    return 2;
  }
  try {
    const auto array = zarrdirect::Array::open(argv[1]);
    const auto values = array.read();
    const auto expected = zarrdirect::read_npy(argv[2]).native_c_order();
    const auto host = zarrdirect::copy_to_host(values);
    std::printf("shape");
    for (auto extent : values.shape()) std::printf(" %llu", static_cast<unsigned long long>(extent));
    const bool equal = host.size() == expected.size() && std::memcmp(host.data(), expected.data(), host.size()) == 0;
    std::printf(", %zu bytes, %s\n", host.size(), equal ? "equal" : "DIFFERENT");
    return equal ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
