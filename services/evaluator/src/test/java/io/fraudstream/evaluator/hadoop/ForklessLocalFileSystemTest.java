package io.fraudstream.evaluator.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager;
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager$;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The forkless local file system gives Hadoop's own results, for both of Hadoop's APIs and Spark's checkpoints. */
class ForklessLocalFileSystemTest {
  @TempDir java.nio.file.Path dir;
  private final ForklessRawLocalFileSystem forkless = new ForklessRawLocalFileSystem();
  private final RawLocalFileSystem hadoops = new RawLocalFileSystem();

  @BeforeEach
  void initialize() throws IOException {
    Configuration conf = new Configuration(false);
    forkless.initialize(URI.create("file:///"), conf);
    hadoops.initialize(URI.create("file:///"), conf);
  }

  /** Hadoop's configuration with the forkless file system for the file: scheme, as the detector sets it. */
  private static Configuration configured() {
    Configuration conf = new Configuration();
    conf.set("fs.file.impl", ForklessLocalFileSystem.class.getName());
    conf.set("fs.AbstractFileSystem.file.impl", ForklessLocalFs.class.getName());
    conf.setBoolean("fs.file.impl.disable.cache", true);
    return conf;
  }

  private Path file(String name) throws IOException {
    java.nio.file.Path p = Files.writeString(dir.resolve(name), name);
    return new Path(p.toUri());
  }

  @Test
  void setsEveryPermissionAsHadoopsChmodDoes() throws IOException {
    for (short mode : new short[] {0644, 0600, 0755, 0000, 0777, 0421, 0070}) {
      Path ours = file("ours-" + mode);
      Path theirs = file("theirs-" + mode);
      forkless.setPermission(ours, new FsPermission(mode));
      hadoops.setPermission(theirs, new FsPermission(mode));
      assertEquals(
          Files.getPosixFilePermissions(java.nio.file.Path.of(theirs.toUri())),
          Files.getPosixFilePermissions(java.nio.file.Path.of(ours.toUri())),
          "mode " + Integer.toOctalString(mode));
    }
  }

  @Test
  void aDirectoryMadeWithAModeHasIt() throws IOException {
    Path made = new Path(dir.resolve("a/b").toUri());
    assertTrue(forkless.mkdirs(made, new FsPermission((short) 0750)));
    assertEquals(
        PosixFilePermissions.fromString("rwxr-x---"), Files.getPosixFilePermissions(dir.resolve("a/b")));
  }

  @Test
  void aMissingFileIsNotFound() {
    Path missing = new Path(dir.resolve("missing").toUri());
    assertThrows(FileNotFoundException.class, () -> forkless.setPermission(missing, new FsPermission((short) 0644)));
    assertThrows(FileNotFoundException.class, () -> forkless.getFileLinkStatus(missing));
  }

  @Test
  void theLinkStatusOfAFileOrDirectoryIsItsStatus() throws IOException {
    for (Path p : new Path[] {file("plain"), new Path(dir.toUri())}) {
      FileStatus ours = forkless.getFileLinkStatus(p);
      FileStatus theirs = hadoops.getFileLinkStatus(p);
      assertEquals(theirs.getPath(), ours.getPath());
      assertEquals(theirs.isDirectory(), ours.isDirectory());
      assertEquals(theirs.getLen(), ours.getLen());
      assertEquals(theirs.getModificationTime(), ours.getModificationTime());
      assertEquals(theirs.getPermission(), ours.getPermission());
      assertFalse(ours.isSymlink());
    }
  }

  @Test
  void aSymbolicLinkIsLeftToHadoop() throws IOException {
    file("target");
    java.nio.file.Path link = Files.createSymbolicLink(dir.resolve("link"), dir.resolve("target"));
    FileStatus ours = forkless.getFileLinkStatus(new Path(link.toUri()));
    FileStatus theirs = hadoops.getFileLinkStatus(new Path(link.toUri()));
    assertEquals(theirs.isSymlink(), ours.isSymlink());
    assertEquals(theirs.getPath(), ours.getPath());
    assertEquals(theirs.getLen(), ours.getLen());
  }

  @Test
  void bothOfHadoopsApisUseItForTheFileScheme() throws IOException {
    Configuration conf = configured();
    FileSystem fs = FileSystem.get(URI.create("file:///"), conf);
    assertInstanceOf(ForklessLocalFileSystem.class, fs);
    assertInstanceOf(ForklessRawLocalFileSystem.class, ((LocalFileSystem) fs).getRaw());
    assertInstanceOf(ForklessLocalFs.class, FileContext.getFileContext(URI.create("file:///"), conf).getDefaultFileSystem());
  }

  @Test
  void sparksCheckpointFileManagerWritesAndReadsAFileWithItsChecksum() throws IOException {
    Path checkpoint = new Path(dir.resolve("checkpoint").toUri());
    CheckpointFileManager manager = CheckpointFileManager$.MODULE$.create(checkpoint, configured());
    manager.mkdirs(checkpoint);
    Path offsets = new Path(checkpoint, "0");
    byte[] content = "v1\n{\"batchWatermarkMs\":0}".getBytes(StandardCharsets.UTF_8);
    for (int attempt = 0; attempt < 2; attempt++) {
      // The second write replaces the first, as a retried batch's does.
      FSDataOutputStream out = manager.createAtomic(offsets, true);
      out.write(content);
      out.close();
    }
    assertTrue(manager.exists(offsets));
    try (InputStream in = manager.open(offsets)) {
      assertArrayEquals(content, in.readAllBytes());
    }
    assertTrue(Files.exists(dir.resolve("checkpoint/.0.crc")), "the checksum beside it");
    assertEquals(
        PosixFilePermissions.fromString("rw-r--r--"), Files.getPosixFilePermissions(dir.resolve("checkpoint/0")));
    assertEquals(1, manager.list(checkpoint).length);
  }
}
