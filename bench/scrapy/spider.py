"""Scrapy's side of the side-by-side benchmark: a CrawlSpider that follows
every link its default LinkExtractor finds on one host, as a Scrapy user
would write it, and prints one summary line like the Go runners':

    engine=scrapy workers=16 fetched=10000 elapsed=12.345s pages_per_s=810

Run it with Debian's Scrapy (python3-scrapy), not through a project:

    /usr/bin/python3 spider.py -root http://127.0.0.1:8700/ -workers 16
    /usr/bin/python3 spider.py -root URL -jobdir DIR      # resumable (JOBDIR)
    /usr/bin/python3 spider.py -root URL -robots=false    # ignore robots.txt

"fetched" counts the responses the spider's callback saw (HTML pages with a
2xx status); the site server's own counts are what the benchmark reports.
"""

import argparse
import sys
import time
from urllib.parse import urlsplit

from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class SiteSpider(CrawlSpider):
    """Follows every link LinkExtractor() finds (its defaults: a and area
    tags, href attributes, common non-HTML extensions skipped) and stays on
    the root's host through allowed_domains."""

    name = "site"
    rules = (Rule(LinkExtractor(), callback="count_page", follow=True),)

    def __init__(self, root, *args, **kwargs):
        self.start_urls = [root]
        self.allowed_domains = [urlsplit(root).hostname]
        self.pages = 0
        super().__init__(*args, **kwargs)

    def parse_start_url(self, response):
        # The root redirects to the first page: count it as any page.
        return self.count_page(response)

    def count_page(self, response):
        self.pages += 1
        return ()


def main():
    ap = argparse.ArgumentParser(prefix_chars="-")
    ap.add_argument("-root", required=True, help="root URL")
    ap.add_argument("-workers", type=int, default=16,
                    help="CONCURRENT_REQUESTS and CONCURRENT_REQUESTS_PER_DOMAIN")
    ap.add_argument("-jobdir", default="", help="JOBDIR: keep the crawl's state there to resume it")
    ap.add_argument("-robots", default="true", choices=["true", "false"],
                    help="obey robots.txt (ROBOTSTXT_OBEY)")
    ap.add_argument("-log", default="WARNING", help="LOG_LEVEL")
    a = ap.parse_args()

    settings = {
        "CONCURRENT_REQUESTS": a.workers,
        "CONCURRENT_REQUESTS_PER_DOMAIN": a.workers,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": a.robots == "true",
        "AUTOTHROTTLE_ENABLED": False,
        "HTTPCACHE_ENABLED": False,
        "COOKIES_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": a.log,
        # The fingerprinter Scrapy 2.7+ recommends; "2.6" only adds a
        # deprecation warning.
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }
    if a.jobdir:
        settings["JOBDIR"] = a.jobdir

    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    start = time.monotonic()
    process.crawl(crawler, root=a.root)
    process.start()
    el = time.monotonic() - start
    n = crawler.spider.pages
    st = crawler.stats.get_stats()
    print(f"engine=scrapy workers={a.workers} fetched={n} elapsed={el:.3f}s "
          f"pages_per_s={n / el:.0f} responses={st.get('response_received_count', 0)} "
          f"dupefilter_filtered={st.get('dupefilter/filtered', 0)} "
          f"offsite_filtered={st.get('offsite/filtered', 0)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
