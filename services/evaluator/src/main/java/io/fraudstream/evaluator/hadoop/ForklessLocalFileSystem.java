package io.fraudstream.evaluator.hadoop;

import org.apache.hadoop.fs.LocalFileSystem;

/**
 * The {@code file:} scheme of Hadoop's FileSystem API ({@code fs.file.impl}): {@link LocalFileSystem}, checksums
 * included, over {@link ForklessRawLocalFileSystem}.
 */
public class ForklessLocalFileSystem extends LocalFileSystem {
  public ForklessLocalFileSystem() {
    super(new ForklessRawLocalFileSystem());
  }
}
