// The transfer driver: runs a batch of HTTP transfers (http_transfer.hpp) at once on the calling
// thread, through one libcurl multi handle borrowed from the process-wide pool
// (http_handle_pool.hpp), so a read's requests share one thread and its keep-alive connections.
//
// At most `in_flight` transfers run at once; as one ends the next starts on its easy handle (and
// connection). A transfer whose attempt failed in a way worth retrying (5xx, 408, 429, a reset,
// a timeout, a short body) waits retry_delay_ms << (attempt - 1) without holding up the others,
// then runs again, up to HttpOptions::retries times. Bodies go straight from libcurl's receive
// buffer into the transfers' own buffers.
//
// The first transfer that fails stops the batch: nothing more starts, those running are cut, and
// run returns; the caller finds it by its state (HttpTransfer::State::failed) and the others
// left waiting.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "store/http_options.hpp"
#include "store/http_transfer.hpp"

struct curl_slist;

namespace zarrdirect {

// Called on the driving thread as each transfer ends (done or missing; a failure stops the batch
// instead), while the others go on arriving: the caller can use its bytes at once. What it
// throws ends the batch and leaves run_transfers.
using HttpFinished = std::function<void(HttpTransfer&)>;

// Runs `transfers` to their end (each done, missing or failed; after a failure the rest may be
// left waiting). `headers`: the extra request lines (token, headers) for every request, or null;
// `on_finished`: null, or called as each ends. Throws only for libcurl itself failing (no
// handle, out of memory), as Error(io), or what `on_finished` throws.
void run_transfers(const HttpOptions& options, const curl_slist* headers, std::span<HttpTransfer* const> transfers,
                   unsigned in_flight, const HttpFinished* on_finished = nullptr);

// Connections opened by every driver of this process so far (keep-alive shows as none opened
// for a batch that found its connections open).
std::uint64_t http_connections_opened();

}  // namespace zarrdirect
