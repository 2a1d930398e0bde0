import express, { type Request, type Response } from 'express';
import bodyParser from 'body-parser';

export function createServer() {
  const server = express();
  server.use(bodyParser.json());
  server.get('/health', (_req: Request, res: Response) => {
    res.send('ok');
  });
  return server;
}

createServer().listen(3000);
