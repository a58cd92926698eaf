package io.fraudstream.evaluator.hadoop;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's raw local file system, with the calls a streaming checkpoint makes answered in the JVM.
 *
 * <p>Without Hadoop's native library (pyspark ships none, nor does the project's image), {@link
 * RawLocalFileSystem} runs a command for each {@link #setPermission} ({@code chmod}, twice per file with its
 * checksum) and each {@link #getFileLinkStatus} ({@code readlink}, several times per rename). Spark's checkpoint file
 * manager creates every checkpoint file (offsets, commits, state changelogs and their metadata) as a temporary file
 * renamed into place: ten processes and ~50 ms per file on two cores, paid between batches and inside every state
 * commit. Contract: the same results as {@link RawLocalFileSystem} for files and directories, permissions included; a
 * sticky bit and symbolic links are left to it.
 */
public class ForklessRawLocalFileSystem extends RawLocalFileSystem {
  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    if (permission.getStickyBit()) {
      super.setPermission(p, permission);
      return;
    }
    try {
      Files.setPosixFilePermissions(pathToFile(p).toPath(), posix(permission));
    } catch (NoSuchFileException e) {
      throw new FileNotFoundException("File " + p + " does not exist");
    }
  }

  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    if (Files.isSymbolicLink(pathToFile(f).toPath())) {
      return super.getFileLinkStatus(f);
    }
    // Not a link (or absent, which getFileStatus reports): its status is the file's own, as Hadoop's is.
    return getFileStatus(f);
  }

  /** The POSIX permissions of {@code permission} (its sticky bit aside). */
  static Set<PosixFilePermission> posix(FsPermission permission) {
    return PosixFilePermissions.fromString(
        permission.getUserAction().SYMBOL + permission.getGroupAction().SYMBOL + permission.getOtherAction().SYMBOL);
  }
}
