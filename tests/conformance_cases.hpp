// The conformance corpus as a list of cases, shared by the host and device conformance tests.
//
// A case is an array (or one level of a multiscale group) beside the values it must read back as.
// A case zarrdirect refuses as unsupported passes only when tests/data/conformance/
// expected_refusals.json lists it with a reason; every other refusal is a failure.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace zarrdirect::test {

struct ConformanceCase {
  std::string name;                // "<writer>/<case>" or "<writer>/<case> level N"
  std::string listed_name;         // "<writer>/<case>": the key of expected_refusals.json
  std::filesystem::path array;     // the array folder to open
  std::filesystem::path expected;  // its expected values (.npy)
};

// Every case under conformance_dir(), sorted. Fails the calling test (throws) when the corpus
// is missing or empty: a test that cannot find its data must never pass.
std::vector<ConformanceCase> conformance_cases();

// The listed reason when `listed_name` is an expected refusal, else nullopt.
std::optional<std::string> expected_refusal(const std::string& listed_name);

// Every entry of expected_refusals.json (case -> reason).
const std::map<std::string, std::string>& expected_refusals();

}  // namespace zarrdirect::test
