// A file the user named that cannot be read or written, said in words: the errno code alone
// ("ENOENT") names the problem only to those who know the codes.

const WORDS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "it is a directory",
  ENOTDIR: "a part of its path is not a directory",
  EROFS: "the file system is read-only",
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is used up",
  ENAMETOOLONG: "the name is too long",
  ELOOP: "too many symbolic links in its path",
  EMFILE: "too many files open",
  EBUSY: "it is busy",
};

/** Why a file operation failed, in words ("permission denied"), for a message that names the file. */
export function fileProblem(err: unknown): string {
  const { code, message } = err as NodeJS.ErrnoException;
  if (code && WORDS[code]) return WORDS[code];
  // Node's own text reads "EXDEV: cross-device link not permitted, rename 'a' -> 'b'": the words only.
  const words = /^[A-Z]+: ([^,]+)/.exec(message ?? "")?.[1];
  return words ?? message ?? String(err);
}
