// File I/O for the files the tool is given and the files it writes.
//
// Paths come from users and from model files, and the directories they name
// may be shared with other users. Two rules follow, kept here in one place:
// - A file is read only when it is a regular file, checked on the opened
//   descriptor (no race between a check and the open), and never beyond the
//   size it has: /dev/zero or a FIFO given as a model or an input is an
//   Error, not an endless read or a hang.
// - A file is written to a fresh temporary file in the target's directory
//   (created with O_EXCL, so a planted symlink is never followed) and then
//   renamed over the target. rename() replaces a symlink at the target path
//   itself, never the file it points to; readers never see half a file.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace collage {

// Opens `path` for reading and checks that it is a regular file of at most
// `max_bytes` bytes. Returns the descriptor (close-on-exec; the caller closes
// it). Throws Error naming the file otherwise.
int open_regular_file(const std::string& path,
                      std::int64_t max_bytes = std::numeric_limits<std::int64_t>::max());

// The whole contents of a regular file of at most `max_bytes` bytes. Throws
// Error naming the file for anything else (a device, a FIFO, a directory, a
// missing or unreadable file, or one that is too large).
std::string read_regular_file(const std::string& path,
                              std::int64_t max_bytes = std::numeric_limits<std::int64_t>::max());

// Replaces `path` with `bytes` atomically (see above). The new file gets
// mode 0666 minus the umask, as a plain create would. Throws Error naming the
// file when it cannot be written; the temporary file is removed then.
void write_file_atomically(const std::string& path, std::string_view bytes);

// Throws the Error write_file_atomically() would throw for `path` when its
// directory cannot take a new file (missing, not writable) or `path` is a
// directory; writes nothing. Long commands call it before their work, so
// that an output they cannot write fails at once, not after it.
void check_writable(const std::string& path);

// Where the tool keeps what it learns about a machine (measurements,
// compiled kernels): $XDG_CACHE_HOME/collage, or ~/.cache/collage. With
// neither XDG_CACHE_HOME nor HOME set: private_temp_directory(). The
// directory may not exist yet; when it does, it must be a real directory
// owned by this user: a symbolic link or another user's directory is an
// Error (docs/security.md).
std::string cache_directory();

// $TMPDIR/collage-<uid> (default /tmp), created with mode 0700. Throws Error
// when it exists but is not a directory owned by this user that only this
// user can access (a symlink, another owner, group or other permissions).
std::string private_temp_directory();

}  // namespace collage
