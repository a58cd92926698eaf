package io.fraudstream.evaluator.hadoop;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;
import org.apache.hadoop.fs.DelegateToFileSystem;
import org.apache.hadoop.fs.FsConstants;

/**
 * The {@code file:} scheme of Hadoop's FileContext API ({@code fs.AbstractFileSystem.file.impl}), which Spark's
 * checkpoint file manager writes through: Hadoop's {@code LocalFs} (checksums over the raw file system) over {@link
 * ForklessRawLocalFileSystem}.
 */
public class ForklessLocalFs extends ChecksumFs {
  /** The constructor Hadoop's FileContext calls for the scheme. */
  public ForklessLocalFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
    super(new Raw(uri, conf));
  }

  /** Hadoop's {@code RawLocalFs} over {@link ForklessRawLocalFileSystem}. */
  static final class Raw extends DelegateToFileSystem {
    Raw(URI uri, Configuration conf) throws IOException, URISyntaxException {
      super(uri, new ForklessRawLocalFileSystem(), conf, FsConstants.LOCAL_FS_URI.getScheme(), false);
    }

    @Override
    public int getUriDefaultPort() {
      return -1;
    }

    @Override
    public boolean isValidName(String src) {
      // As RawLocalFs: any name the local file system takes.
      return true;
    }
  }
}
